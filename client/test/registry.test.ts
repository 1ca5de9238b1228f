// The registry both watchers (watch, watchMember) keep their counters in, over plain hooks: one set of
// listeners per counter shared by its watchers, a joining watcher told the current value at once, each
// told only of changes, errors told to all, a counter's state kept while its calls are in flight, and
// the counter document's reading (stale skipped, malformed told). (With the real SDK: *.emulator.test.ts.)
import { createRegistry, tell, type Watcher } from "../src/registry";
import type { Time } from "../src/coverage";

interface TestState {
  watchers: Set<Watcher<string>>;
  unsubscribe: (() => void) | undefined;
  seenUntil: Time | null;
  /** What the listeners delivered: the value to show, if any. */
  value: number | undefined;
  /** Calls in flight. */
  calls: number;
}

/** A registry whose listeners are recorded: `deliver` plays a listener's snapshot for a counter. */
function recorded() {
  const started: string[] = [];
  const stopped: string[] = [];
  const registry = createRegistry<Watcher<string>, TestState>({
    create: () => ({ watchers: new Set(), unsubscribe: undefined, seenUntil: null, value: undefined, calls: 0 }),
    listen: (counterId) => {
      started.push(counterId);
      return () => stopped.push(counterId);
    },
    publish: (counterId, state) => {
      if (state.value === undefined) return;
      for (const watcher of state.watchers) tell(watcher, state.value, counterId);
    },
    stopped: (state) => {
      state.value = undefined;
    },
    busy: (state) => state.calls > 0,
  });
  const deliver = (counterId: string, value: number) => {
    const state = registry.stateOf(counterId);
    state.value = value;
    for (const watcher of state.watchers) tell(watcher, value, counterId);
  };
  return { registry, started, stopped, deliver };
}

/** A watcher that records what it is told. */
function watcher() {
  const values: (number | null)[] = [];
  const errors: string[] = [];
  return {
    values,
    errors,
    watcher: { onValue: (value: number | null) => values.push(value), onError: (error: Error) => errors.push(error.message), last: undefined } as Watcher<string>,
  };
}

const at = (seconds: number): Time => ({ seconds, nanoseconds: 0 });

/** A counter snapshot as coverage.ts reads it. */
function snapshot(fields: Record<string, unknown> | null) {
  return { exists: () => fields !== null, get: (field: string) => (field === "rollup.readTime" ? (fields?.rollup as { readTime?: unknown })?.readTime : fields?.[field]) };
}

describe("watcher registry", () => {
  it("shares one set of listeners between a counter's watchers: started with the first, stopped with the last", () => {
    const { registry, started, stopped } = recorded();
    const stopA = registry.watch("c", watcher().watcher);
    const stopB = registry.watch("c", watcher().watcher);
    registry.watch("d", watcher().watcher);
    expect(started).toEqual(["c", "d"]);
    stopA();
    expect(stopped).toEqual([]);
    stopB();
    stopB(); // a second call changes nothing
    expect(stopped).toEqual(["c"]);
  });

  it("tells a joining watcher the current value at once, and each watcher only of changes", () => {
    const { registry, deliver } = recorded();
    const first = watcher();
    registry.watch("c", first.watcher);
    deliver("c", 3);
    deliver("c", 3);
    deliver("c", 4);
    const second = watcher();
    registry.watch("c", second.watcher);
    expect(first.values).toEqual([3, 4]);
    expect(second.values).toEqual([4]);
  });

  it("tells every watcher of a counter an error", () => {
    const { registry } = recorded();
    const a = watcher();
    const b = watcher();
    const other = watcher();
    registry.watch("c", a.watcher);
    registry.watch("c", b.watcher);
    registry.watch("d", other.watcher);
    registry.fail(registry.stateOf("c"), new Error("listen failed"));
    expect([a.errors, b.errors, other.errors]).toEqual([["listen failed"], ["listen failed"], []]);
  });

  it("keeps a counter's state while its calls are in flight after the last watcher leaves, forgetting what the listeners delivered", () => {
    const { registry, deliver } = recorded();
    const stop = registry.watch("c", watcher().watcher);
    deliver("c", 5);
    const state = registry.stateOf("c");
    state.calls = 1;
    stop();
    expect(registry.stateOf("c")).toBe(state);
    expect(state.value).toBeUndefined();
    state.calls = 0;
    registry.forgetIfIdle("c", state);
    expect(registry.stateOf("c")).not.toBe(state);
  });

  it("forgets an idle counter when its last watcher leaves, and stops every watch on dispose", () => {
    const { registry, stopped } = recorded();
    const stop = registry.watch("c", watcher().watcher);
    const state = registry.stateOf("c");
    stop();
    expect(registry.stateOf("c")).not.toBe(state);
    const stopD = registry.watch("d", watcher().watcher);
    registry.watch("e", watcher().watcher);
    registry.dispose();
    expect(stopped).toEqual(["c", "d", "e"]);
    stopD(); // after dispose: nothing more to stop
    expect(stopped).toEqual(["c", "d", "e"]);
  });

  it("reads the counter document: skips a snapshot older than one seen, tells watchers of one without an integer total", () => {
    const { registry } = recorded();
    const w = watcher();
    registry.watch("c", w.watcher);
    const state = registry.stateOf("c");
    expect(registry.readCounter("c", state, snapshot({ total: 7, createdAt: at(1), rollup: { readTime: at(5) } }))).toEqual({
      exists: true,
      total: 7,
      coveredUntil: at(5),
    });
    expect(state.seenUntil).toEqual(at(5));
    expect(registry.readCounter("c", state, snapshot({ total: 6, createdAt: at(1), rollup: { readTime: at(4) } }))).toBeUndefined();
    expect(state.seenUntil).toEqual(at(5));
    expect(registry.readCounter("c", state, snapshot({ total: "7" }))).toBeUndefined();
    expect(w.errors).toEqual(["counters/c has no integer total"]);
    expect(registry.readCounter("c", state, snapshot(null))).toEqual({ exists: false, total: 0, coveredUntil: null });
  });
});
