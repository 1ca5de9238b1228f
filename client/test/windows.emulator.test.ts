// watch(counterId, onValue, onError, { window }) with the real Firebase JS SDK against the emulators
// (auth, functions with the real rollup trigger, firestore): a windowed counter created through
// createCounter, own increments (some slow, so that rollups land while they are in flight) and another
// client's. Every emitted value is checked: shown = the parent's windows in that snapshot + own
// increments of the window's span not in it (by the coverage rule). At the end: shown = total = shard
// sum. Also: a window of a counter that is not windowed, and the client's own UTC midnight moving
// the window without a write. (The pure arithmetic: windows.test.ts.)
import { doc, onSnapshot } from "firebase/firestore";
import { httpsCallable } from "firebase/functions";
import { createCounterClient, type CounterClient, type CounterView, type Time, type WindowName } from "../src";
import { asTime, compareTimes, laterOf } from "../src/coverage";
import { dayOfTime, msUntilNextUtcMidnight, spanStart } from "../src/windows";
import { e2eAdminDb } from "../../test/helpers/admin";
import { pause, threeUsers, until } from "../../test/helpers/client-users";
import { shardSumIn } from "../../test/helpers/documents";

jest.setTimeout(120_000);

const db = e2eAdminDb();
const users = threeUsers();

/**
 * The functions emulator applies increments on the real clock's UTC day, which a test cannot move: a test
 * that needs the server's day to stay one day throughout never starts in the last 90 s before a UTC
 * midnight (it waits past it), so it passes at any hour.
 */
beforeEach(async () => {
  const left = msUntilNextUtcMidnight(Date.now());
  if (left < 90_000) await pause(left + 1_000);
}, 120_000);

interface Emission {
  seq: number;
  value: number | null;
  view: CounterView;
}

/** What the parent held at one coverage time, as a plain listener saw it. */
interface ParentState {
  total: number;
  windows: Record<string, unknown> | undefined;
}

const keyOf = (time: Time | null) => JSON.stringify(time === null ? null : [time.seconds, time.nanoseconds]);

/** A windowed counter, its watches and increments, with one sequence ordering increments against emissions. */
class WindowsHarness {
  seq = 0;
  readonly emissions = new Map<WindowName, Emission[]>();
  readonly errors: Error[] = [];
  /** Own increments: when each started, and its commit time once answered. */
  readonly own: { delta: number; startSeq: number; writeTime?: Time }[] = [];
  /** Parent states by coveredUntil, from a plain listener on the same Firestore instance. */
  readonly parents = new Map<string, ParentState>();
  private readonly stops: (() => void)[] = [];

  constructor(
    readonly counterId: string,
    readonly client: CounterClient,
  ) {
    this.stops.push(
      onSnapshot(doc(users.user.firestore, "counters", counterId), (s) => {
        if (!s.exists()) return;
        const coveredUntil = laterOf(asTime(s.get("rollup.readTime")), asTime(s.get("createdAt")));
        this.parents.set(keyOf(coveredUntil), { total: s.get("total") as number, windows: s.get("windows") as Record<string, unknown> | undefined });
      }),
    );
  }

  watch(window: WindowName): void {
    const emissions: Emission[] = [];
    this.emissions.set(window, emissions);
    this.stops.push(
      this.client.watch(
        this.counterId,
        (value, view) => emissions.push({ seq: ++this.seq, value, view }),
        (error) => this.errors.push(error),
        { window },
      ),
    );
  }

  async increment(delta: number): Promise<void> {
    const own: { delta: number; startSeq: number; writeTime?: Time } = { delta, startSeq: ++this.seq };
    this.own.push(own);
    own.writeTime = (await this.client.increment(this.counterId, delta)).writeTime;
  }

  /** The last emission of a window, once `done` holds for it. */
  async until(window: WindowName, done: (e: Emission) => boolean): Promise<Emission> {
    const emissions = this.emissions.get(window)!;
    await until(() => emissions.length > 0 && done(emissions[emissions.length - 1]!));
    return emissions[emissions.length - 1]!;
  }

  /**
   * What the client must show at an emission: the parent's windows of the snapshot it is based on, plus
   * the own increments started before it that the snapshot does not cover and whose day is in the span.
   */
  expectedAt(window: WindowName, e: Emission): { windowTotal: unknown; pending: number } {
    const parent = this.parents.get(keyOf(e.view.coveredUntil));
    expect(parent?.windows?.day).toBe(e.view.day); // created and incremented today: the parent's day is the client's
    let pending = 0;
    for (const own of this.own) {
      if (own.startSeq > e.seq) continue;
      const writeTime = own.writeTime!;
      const covered = e.view.coveredUntil !== null && compareTimes(writeTime, e.view.coveredUntil) <= 0;
      const day = dayOfTime(writeTime);
      if (!covered && day >= spanStart(window, e.view.day!) && day <= e.view.day!) pending += own.delta;
    }
    return { windowTotal: parent?.windows?.[window], pending };
  }

  stop(): void {
    for (const stop of this.stops.splice(0)) stop();
  }
}

describe("watch with a window, against the emulators", () => {
  it("shows today and last7Days as the parent's windows plus own increments not in them on every emission, and ends exact", async () => {
    const counterId = `client-windows-${Date.now()}`;
    await users.admin.call("createCounter", { counterId, numShards: 2, windowed: true });
    const callable = httpsCallable(users.user.functions, "incrementCounter");
    const client = createCounterClient({
      functions: users.user.functions,
      firestore: users.user.firestore,
      // Some calls slow: rollups of the other client's increments land while ours are in flight.
      call: async (request) => {
        if (request.delta > 1) await pause(300 + Math.floor(Math.random() * 600));
        return (await callable(request)).data;
      },
    });
    const h = new WindowsHarness(counterId, client);
    h.watch("today");
    h.watch("last7Days");
    await h.until("today", (e) => e.view.exists);

    const running: Promise<unknown>[] = [];
    const deltas = [1, 2, 1, -1, 3, 1, 2, 5];
    for (const [i, delta] of deltas.entries()) {
      running.push(h.increment(delta));
      if (i % 2 === 0) running.push(users.other.call("incrementCounter", { counterId, delta: 10 + i, requestId: `o-${i}-${Date.now()}` }));
      await pause(150);
    }
    await Promise.all(running);

    const sum = await shardSumIn(db, counterId);
    const final = await h.until("today", (e) => e.view.total === sum && e.view.pending === 0 && e.view.windowTotal === sum);
    const final7 = await h.until("last7Days", (e) => e.view.total === sum && e.view.pending === 0 && e.view.windowTotal === sum);
    h.stop();
    client.dispose();

    expect(h.errors).toEqual([]);
    expect(sum).toBe(deltas.reduce((s, d) => s + d, 0) + [0, 2, 4, 6].reduce((s, i) => s + 10 + i, 0));
    expect([final.value, final7.value]).toEqual([sum, sum]);
    for (const window of ["today", "last7Days"] as const) {
      const emissions = h.emissions.get(window)!;
      const wrong = emissions
        .map((e) => ({ e, expected: h.expectedAt(window, e) }))
        .filter(({ e, expected }) => e.view.window !== window || e.view.windowTotal !== expected.windowTotal || e.view.pending !== expected.pending || e.value !== (expected.windowTotal as number) + expected.pending);
      expect(wrong).toEqual([]);
    }
    // The optimistic path was taken: some values included own increments not in the parent's windows.
    expect(h.emissions.get("today")!.some((e) => e.view.pending > 0)).toBe(true);
    console.log(`windows schedule: ${h.own.length} own increments, ${h.emissions.get("today")!.length} + ${h.emissions.get("last7Days")!.length} emissions checked`);
  });

  it("reports a window of a counter that is not windowed through onError, naming it, with value null", async () => {
    const counterId = `client-windows-plain-${Date.now()}`;
    await users.user.call("createCounter", { counterId, numShards: 1 });
    const client = createCounterClient({ functions: users.user.functions, firestore: users.user.firestore });
    const values: (number | null)[] = [];
    const errors: string[] = [];
    const stop = client.watch(counterId, (value) => values.push(value), (error) => errors.push(error.message), { window: "today" });
    const totals: (number | null)[] = [];
    const stopTotal = client.watch(counterId, (value) => totals.push(value));
    await until(() => values.length > 0 && totals.length > 0);
    await client.increment(counterId, 2);
    await until(() => totals.includes(2));
    stop();
    stopTotal();
    client.dispose();
    expect(values.every((v) => v === null)).toBe(true);
    expect(errors).toEqual([`counters/${counterId} is not a windowed counter (created without windowed: true): it has no window "today"`]);
    expect(totals[totals.length - 1]).toBe(2); // the total of the same counter is unaffected
  });

  it("moves the window at the client's UTC midnight without a write: today drops to 0, last7Days keeps the day", async () => {
    const counterId = `client-windows-midnight-${Date.now()}`;
    await users.admin.call("createCounter", { counterId, numShards: 1, windowed: true });
    await users.other.call("incrementCounter", { counterId, delta: 4, requestId: `m-${Date.now()}` });
    for (;;) {
      const parent = await db.collection("counters").doc(counterId).get();
      if (parent.get("total") === 4) break;
      await pause(50);
    }
    // A client whose clock is 4 s before the end of the server's current UTC day, once the rollup has
    // the increment: its first snapshot shows it for that day, its timer then moves the window.
    const offset = Date.now() + msUntilNextUtcMidnight(Date.now()) - 4_000 - Date.now();
    const client = createCounterClient({ functions: users.user.functions, firestore: users.user.firestore, now: () => Date.now() + offset });
    const today: Emission[] = [];
    const week: Emission[] = [];
    let seq = 0;
    const stops = [
      client.watch(counterId, (value, view) => today.push({ seq: ++seq, value, view }), undefined, { window: "today" }),
      client.watch(counterId, (value, view) => week.push({ seq: ++seq, value, view }), undefined, { window: "last7Days" }),
    ];
    await until(() => today.some((e) => e.value === 4));
    const day = today.find((e) => e.value === 4)!.view.day!;
    await until(() => today.some((e) => e.view.day !== day)); // the timer, not a snapshot
    const after = today[today.length - 1]!;
    await until(() => week.some((e) => e.view.day !== day));
    for (const stop of stops) stop();
    client.dispose();
    expect(after.value).toBe(0);
    expect(after.view.day! > day).toBe(true);
    expect(after.view.total).toBe(4);
    const weekAfter = week[week.length - 1]!;
    expect([weekAfter.value, weekAfter.view.day]).toEqual([4, after.view.day]);
    expect(today.filter((e) => e.view.day === day).map((e) => e.value)).toEqual([4]);
  });
});
