// The watched counters of one client, for both watchers (watch and watchMember): the state kept per
// counter, the watchers that share one set of listeners on it (started with the first watcher, stopped
// with the last), telling them of values and errors, reading the counter document they all listen to,
// and forgetting a counter once nothing watches it and none of its calls is in flight. What else a state
// holds and what its listeners do is the watcher's own.
import { readCounterSnapshot, type CounterSnapshotState, type Time } from "./coverage.js";

/** One watch: its callbacks, and what it was told last. */
export interface Watcher<View> {
  onValue: (value: number | null, view: View) => void;
  onError: ((error: Error) => void) | undefined;
  /** The last value and view it was told (as JSON): it is told only of changes. */
  last: string | undefined;
}

/** What the registry keeps in every counter's state. */
export interface Watched<W> {
  watchers: Set<W>;
  /** Stops the counter's listeners; undefined while nothing listens. */
  unsubscribe: (() => void) | undefined;
  /** The newest coveredUntil of any counter snapshot received. */
  seenUntil: Time | null;
}

/** What a watcher tells the registry about its states. */
export interface RegistryHooks<S, W> {
  /** A fresh state for a counter. */
  create: () => S;
  /** Starts the counter's listeners for its first watcher; returns what stops them. */
  listen: (counterId: string, state: S, first: W) => () => void;
  /** Tells the watchers the value to show, if there is one yet. */
  publish: (counterId: string, state: S) => void;
  /** The listeners stopped: forget what they delivered (what calls in flight need stays). */
  stopped: (state: S) => void;
  /** Calls of the counter are in flight: keep its state while nothing watches it. */
  busy: (state: S) => boolean;
}

export interface Registry<S, W> {
  /** The counter's state, made fresh if the client keeps none. */
  stateOf: (counterId: string) => S;
  /** Drops the counter's state if nothing watches it and no call of it is in flight. */
  forgetIfIdle: (counterId: string, state: S) => void;
  /** Adds a watcher to the counter's listeners (starting them for the first); returns its unsubscribe. */
  watch: (counterId: string, watcher: W) => () => void;
  /** Tells every watcher of the state an error (a listener failed, a document is malformed). */
  fail: (state: S, error: Error) => void;
  /**
   * A snapshot of `counters/{counterId}` (coverage.ts reads it): the counter to show, or undefined when it
   * is older than one seen (skipped) or has no integer total (the watchers are told).
   */
  readCounter: (counterId: string, state: S, snap: { exists(): boolean; get(field: string): unknown }) => CounterSnapshotState | undefined;
  /** Stops every watch. */
  dispose: () => void;
  /** How many counters have their listeners open now, and how many watchers share them. */
  listening: () => Listening;
}

/** The registry's own count of what is open: counters listened to, and the watchers sharing them. */
export interface Listening {
  counters: number;
  watchers: number;
}

export function createRegistry<W extends { onError: ((error: Error) => void) | undefined }, S extends Watched<W>>(
  hooks: RegistryHooks<S, W>,
): Registry<S, W> {
  const states = new Map<string, S>();

  function stateOf(counterId: string): S {
    let state = states.get(counterId);
    if (state === undefined) {
      state = hooks.create();
      states.set(counterId, state);
    }
    return state;
  }

  function forgetIfIdle(counterId: string, state: S): void {
    if (state.watchers.size === 0 && !hooks.busy(state)) states.delete(counterId);
  }

  /** The last watcher is gone: stop the listeners, and keep only what calls in flight need. */
  function stopListening(counterId: string, state: S): void {
    state.unsubscribe?.();
    state.unsubscribe = undefined;
    hooks.stopped(state);
    forgetIfIdle(counterId, state);
  }

  function watch(counterId: string, watcher: W): () => void {
    const state = stateOf(counterId);
    state.watchers.add(watcher);
    if (state.unsubscribe === undefined) {
      state.unsubscribe = hooks.listen(counterId, state, watcher);
    } else {
      hooks.publish(counterId, state); // a second watcher gets the current value at once
    }
    return () => {
      if (!state.watchers.delete(watcher)) return;
      if (state.watchers.size === 0) stopListening(counterId, state);
    };
  }

  function fail(state: S, error: Error): void {
    for (const watcher of state.watchers) watcher.onError?.(error);
  }

  function readCounter(counterId: string, state: S, snap: { exists(): boolean; get(field: string): unknown }): CounterSnapshotState | undefined {
    const read = readCounterSnapshot(snap, state.seenUntil);
    if (read.kind === "malformed") {
      fail(state, new Error(`counters/${counterId} has no integer total`));
      return undefined;
    }
    if (read.kind === "stale") return undefined;
    state.seenUntil = read.seenUntil;
    return read.state;
  }

  function dispose(): void {
    for (const [counterId, state] of states) {
      state.watchers.clear();
      stopListening(counterId, state);
    }
  }

  function listening(): Listening {
    let counters = 0;
    let watchers = 0;
    for (const state of states.values()) {
      if (state.unsubscribe !== undefined) counters++;
      watchers += state.watchers.size;
    }
    return { counters, watchers };
  }

  return { stateOf, forgetIfIdle, watch, fail, readCounter, dispose, listening };
}

/** Tells a watcher the value and view to show, unless it was told exactly these last. */
export function tell<View>(watcher: Watcher<View>, value: number | null, view: View): void {
  const key = JSON.stringify([value, view]);
  if (watcher.last === key) return;
  watcher.last = key;
  watcher.onValue(value, view);
}
