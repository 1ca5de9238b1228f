// setMember and watchMember (unique counters, likes) with the real Firebase JS SDK against the emulators:
// the functions with the real rollup trigger, Firestore and Auth. Randomized, seeded schedules: taps of
// one user on this device (double taps, answers lost after the server changed the membership, refusals,
// answers held back while the rollup covers their change), the same user on a second device, and other
// users liking and unliking.
//
// Every emitted value is checked against the truth, which the test knows and the client does not: every
// change of the user's membership with its commit time (the client never sees the second device's, nor
// the time of a change whose answer was lost). With M(R) = the user's membership at the snapshot's
// coverage time R, `total − M(R)` is exactly the other members the snapshot holds, so:
// - exact: value = (total − M(R)) + (shown member ? 1 : 0) on every emission at which every change of
//   the user's membership after R was made by this device's calls whose answers arrived (or are still
//   in flight): the user's own like is never counted twice and never dropped;
// - otherwise (the second device's change, or a lost answer's change, not covered yet), the client shows
//   the server's values for that change: off by at most one, and only until the rollup covers it;
// - at the end: shown = total = the number of member documents, and shown member = the member document.
// One thing is not the client's: the exact check needs the member document the listener delivered to be
// a state the document had at or after R. Once in about 15 runs the emulator left the listener on
// "deleted" for 2 s after a delete and a re-create 40 ms apart (the server answered both changed: true);
// emissions built on such a snapshot are counted and printed, and only checked to be off by at most one.
// Re-run a failing schedule with CLIENT_TEST_SEED=<seed printed on failure>.
//
// Mutation tried (2026-11-24): removing the hold-back in member-coverage.ts (`continue` instead of the
// `return null` for a snapshot newer than an in-flight call's bound) made the randomized test and the
// hold-back test below fail, on emissions checked exactly: a like (or unlike) whose answer was late while
// the rollup covered it was shown as total (already with it) ± 1, i.e. the user's like counted twice (or
// taken away twice). Restored, both pass. Second mutation: reading the member document for the
// membership before an in-flight call (`before = known` instead of the value recorded at sending) made
// three of the four tests fail (the member document already held the call's change, the total did not:
// the like was dropped). Third mutation: publishing on each listener's callback instead of on
// snapshots-in-sync did NOT make these tests fail in three runs: here the member document's change
// reaches the client well before the rollup's, so a cut with a stale member document next to a newer
// total was not produced. (Checking that a view's member document is never older than its total would
// show it, but the emulator itself once broke that: see staleMemberDoc.)
import { deleteApp, initializeApp } from "firebase/app";
import { connectAuthEmulator, getAuth, signInWithEmailAndPassword } from "firebase/auth";
import { connectFirestoreEmulator, getFirestore } from "firebase/firestore";
import { connectFunctionsEmulator, FunctionsError, getFunctions, httpsCallable } from "firebase/functions";
import { randomUUID } from "node:crypto";
import { createCounterClient, SetMemberError, type CounterClient, type MemberView, type SetMemberRequest, type Time } from "../src";
import { compareTimes } from "../src/coverage";
import { E2E_PROJECT, signedInClient, type Client } from "../../functions/test/helpers/client";
import { e2eAdminDb } from "../../functions/test/helpers/admin";
import { authHost, firestoreHost, requireFunctionsEmulator } from "../../functions/test/helpers/emulators";
import { shardSumIn } from "../../functions/test/helpers/documents";
// The model check's seeded PRNG (mulberry32), so a failing schedule can be replayed.
import { rngOf } from "../../functions/test/unit/model/sim";

jest.setTimeout(300_000);

const db = e2eAdminDb();
let user: Client;
/** The same user signed in on a second device (another app instance). */
let device2: { functions: ReturnType<typeof getFunctions>; close: () => Promise<void> };
let others: Client[];

function split(host: string): [string, number] {
  const i = host.lastIndexOf(":");
  return [host.slice(0, i), Number(host.slice(i + 1))];
}

beforeAll(async () => {
  user = await signedInClient();
  others = await Promise.all([signedInClient(), signedInClient(), signedInClient()]);
  const app = initializeApp({ projectId: E2E_PROJECT, apiKey: "demo-api-key", appId: "demo-app" }, randomUUID());
  const auth = getAuth(app);
  connectAuthEmulator(auth, `http://${authHost()}`, { disableWarnings: true });
  const functions = getFunctions(app, "us-central1");
  connectFunctionsEmulator(functions, ...split(await requireFunctionsEmulator()));
  connectFirestoreEmulator(getFirestore(app), ...split(firestoreHost()));
  const signedIn = await signInWithEmailAndPassword(auth, user.user.email!, "password-123");
  expect(signedIn.user.uid).toBe(user.user.uid);
  device2 = { functions, close: () => deleteApp(app) };
});

afterAll(async () => {
  await Promise.all([user?.close(), device2?.close(), ...(others ?? []).map((o) => o.close())]);
});

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Mode = "normal" | "lose" | "refuse" | "slow-send" | "slow-answer";

/** A change of the user's membership, with who made it and whether its answer reached the client. */
interface Change {
  member: boolean;
  writeTime: Time;
  origin: "device" | "lost" | "device2";
  /** `seq` when the call that made it was sent: it cannot be in any snapshot emitted before. */
  sentSeq: number;
}

interface Emission {
  seq: number;
  value: number | null;
  view: MemberView;
}

type Answer = { changed: boolean; writeTime: Time | null };

/** Drives one schedule on one unique counter and records everything the assertions need. */
class Harness {
  seq = 0;
  readonly changes: Change[] = [];
  readonly emissions: Emission[] = [];
  readonly client: CounterClient;
  readonly device2Client: CounterClient;
  /** The mode of each of this device's calls, in the order they are sent (calls go out one at a time). */
  private readonly modes: Mode[] = [];
  private readonly callable = httpsCallable<unknown, Answer>(user.functions, "setMember");
  private readonly device2Callable = httpsCallable<unknown, Answer>(device2.functions, "setMember");
  private waiters: (() => void)[] = [];
  lost = 0;
  refused = 0;
  /** What happened, in order: for the dump printed when a schedule fails. */
  readonly log: string[] = [];

  constructor(readonly counterId: string) {
    this.client = createCounterClient({
      functions: user.functions,
      firestore: user.firestore,
      sleep: () => pause(20),
      callSetMember: (request) => this.transport(request),
    });
    this.device2Client = createCounterClient({
      functions: device2.functions,
      firestore: user.firestore, // never watched: device 2 only calls
      sleep: () => pause(20),
      callSetMember: async (request) => {
        const sentSeq = ++this.seq;
        const { data } = await this.device2Callable(request);
        if (data.changed) this.changes.push({ member: request.member, writeTime: data.writeTime!, origin: "device2", sentSeq });
        this.log.push(`${sentSeq} device2 ${request.member}: changed=${data.changed} w=${fmt(data.writeTime)}`);
        return data;
      },
    });
  }

  /** The real callable, wrapped: each call of this device takes the next mode. */
  private async transport(request: SetMemberRequest): Promise<unknown> {
    const mode = this.modes.shift() ?? "normal";
    if (mode === "slow-send") await pause(300 + Math.floor(Math.random() * 700));
    if (mode === "refuse") {
      // Refused for real (member must be a boolean): invalid-argument, nothing written.
      this.refused++;
      const error = await this.callable({ ...request, member: "yes" }).catch((e: unknown) => e);
      throw error;
    }
    const sentSeq = ++this.seq;
    const { data } = await this.callable(request);
    this.log.push(`${sentSeq} server answered ${request.member} (${mode}): changed=${data.changed} w=${fmt(data.writeTime)}`);
    if (mode === "lose") {
      this.lost++;
      if (data.changed) this.changes.push({ member: request.member, writeTime: data.writeTime!, origin: "lost", sentSeq });
      this.modes.unshift("normal"); // the retry goes through
      throw new FunctionsError("unavailable", "simulated: the answer was lost after the server answered");
    }
    if (data.changed) this.changes.push({ member: request.member, writeTime: data.writeTime!, origin: "device", sentSeq });
    // The answer is late: the rollup covers its change meanwhile, and the listener delivers that total.
    if (mode === "slow-answer") await pause(1500 + Math.floor(Math.random() * 1000));
    return data;
  }

  watch(): () => void {
    return this.client.watchMember(this.counterId, user.user.uid, (value, view) => {
      this.emissions.push({ seq: ++this.seq, value, view });
      this.log.push(`${this.seq} emit value=${value} member=${view.member} doc=${view.memberDoc} total=${view.total} R=${fmt(view.coveredUntil)} pending=${view.pending}`);
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** A tap: setMember with the given mode for the call that carries it. */
  async tap(member: boolean, mode: Mode): Promise<void> {
    this.modes.push(mode);
    this.log.push(`${++this.seq} tap ${member} ${mode}`);
    try {
      const outcome = await this.client.setMember(this.counterId, member);
      this.log.push(`${++this.seq} answered ${member}: changed=${outcome.changed} w=${fmt(outcome.writeTime)} attempts=${outcome.attempts}`);
    } catch (error) {
      if (mode !== "refuse") throw error;
      expect(error).toBeInstanceOf(SetMemberError);
      expect(error).toMatchObject({ code: "invalid-argument", maybeApplied: false });
    }
  }

  async onDevice2(member: boolean): Promise<void> {
    await this.device2Client.setMember(this.counterId, member);
  }

  async until(done: (e: Emission) => boolean): Promise<Emission> {
    for (;;) {
      const last = this.emissions[this.emissions.length - 1];
      if (last !== undefined && done(last)) return last;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** The user's membership at time `at` (null: before any change, the counter starts with no members). */
  memberAt(at: Time | null): boolean {
    let member = false;
    let latest: Time | null = null;
    for (const c of this.changes) {
      if (at === null || compareTimes(c.writeTime, at) > 0) continue;
      if (latest === null || compareTimes(c.writeTime, latest) > 0) {
        latest = c.writeTime;
        member = c.member;
      }
    }
    return member;
  }

  /**
   * Whether every change the snapshot of `e` may have seen and does not cover was made by this device with
   * its answer delivered (or still in flight). A change sent after `e` was emitted is not in it.
   */
  clean(e: Emission): boolean {
    const at = e.view.coveredUntil;
    return this.changes.every((c) => c.origin === "device" || c.sentSeq > e.seq || (at !== null && compareTimes(c.writeTime, at) <= 0));
  }

  /**
   * Whether the view's member document is a state the document never had from R to the emission: the
   * listener was behind (see the header). Production delivers one consistent snapshot; the emulator
   * once did not.
   */
  staleMemberDoc(e: Emission): boolean {
    const at = e.view.coveredUntil;
    const since = this.changes.filter((c) => c.sentSeq < e.seq && (at === null || compareTimes(c.writeTime, at) > 0));
    return e.view.memberDoc !== this.memberAt(at) && since.every((c) => c.member !== e.view.memberDoc);
  }

  /** value − (the other members the snapshot holds + the membership shown): 0 when exact. */
  error(e: Emission): number {
    if (e.value === null) return 0;
    const othersInTotal = e.view.total - (this.memberAt(e.view.coveredUntil) ? 1 : 0);
    return e.value - (othersInTotal + (e.view.member ? 1 : 0));
  }
}

const fmt = (t: Time | null) => (t === null ? "-" : `${t.seconds % 1000}.${String(t.nanoseconds).padStart(9, "0").slice(0, 6)}`);

function seedOf(): number {
  const fromEnv = process.env.CLIENT_TEST_SEED;
  return fromEnv !== undefined ? Number(fromEnv) : Math.floor(Math.random() * 2 ** 31);
}

async function withSeed(name: string, body: (random: () => number, log: string[]) => Promise<void>): Promise<void> {
  const seed = seedOf();
  const log: string[] = [];
  try {
    await body(rngOf(seed), log);
  } catch (error) {
    console.error(`${name} failed with seed ${seed}; re-run with CLIENT_TEST_SEED=${seed}\n${log.join("\n")}`);
    throw error;
  }
}

async function membersOf(counterId: string): Promise<number> {
  return (await db.collection(`counters/${counterId}/members`).count().get()).data().count;
}

async function memberDocExists(counterId: string): Promise<boolean> {
  return (await db.doc(`counters/${counterId}/members/${user.user.uid}`).get()).exists;
}

/** Waits until the shown values are the server's, settled: no own change pending, total = member documents. */
async function settled(h: Harness): Promise<Emission> {
  const members = await membersOf(h.counterId);
  const mine = await memberDocExists(h.counterId);
  return h.until((e) => e.view.total === members && e.view.pending === 0 && e.view.memberDoc === mine && e.view.member === mine);
}

describe("setMember and watchMember against the emulators", () => {
  it("shows the like and the count together, exactly, across double taps, lost answers, refusals, a second device and other users", async () => {
    await withSeed("randomized like schedule", async (random, log) => {
      const counterId = `likes-${Date.now()}-${Math.floor(random() * 1e6)}`;
      await user.call("createCounter", { counterId, numShards: 3, unique: true });
      const h = new Harness(counterId);
      h.log.push = (...lines) => log.push(...lines);
      const unwatch = h.watch();
      await h.until((e) => e.view.exists);
      const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
      const running: Promise<void>[] = [];
      let intent = false;
      for (let step = 0; step < 60; step++) {
        const r = random();
        if (r < 0.5) {
          // A tap toggles; a double tap sends both at once (they go out one after the other).
          const taps = random() < 0.25 ? 2 : 1;
          for (let i = 0; i < taps; i++) {
            intent = random() < 0.85 ? !intent : intent; // sometimes a repeated like (changed: false)
            running.push(h.tap(intent, pick<Mode>(["normal", "normal", "lose", "refuse", "slow-send", "slow-answer", "slow-answer"])));
          }
        } else if (r < 0.62) {
          running.push(h.onDevice2(random() < 0.5));
        } else if (r < 0.85) {
          running.push(pick(others).call("setMember", { counterId, member: random() < 0.6 }).then(() => undefined));
        } else {
          await pause(Math.floor(random() * 400));
        }
        if (running.length >= 4) await Promise.all(running.splice(0, 2));
      }
      await Promise.all(running.splice(0));
      const final = await settled(h);
      unwatch();
      h.client.dispose();

      const members = await membersOf(counterId);
      expect(final.value).toBe(members);
      expect(final.view.total).toBe(members);
      expect(await shardSumIn(db, counterId)).toBe(members);
      expect(final.view.member).toBe(await memberDocExists(counterId));
      expect(final.view.member).toBe(h.memberAt({ seconds: Number.MAX_SAFE_INTEGER, nanoseconds: 0 }));

      const stale = h.emissions.filter((e) => h.staleMemberDoc(e));
      const exact = h.emissions.filter((e) => h.clean(e) && !h.staleMemberDoc(e));
      const wrong = exact.filter((e) => h.error(e) !== 0);
      expect(wrong.map((e) => ({ ...e, error: h.error(e) }))).toEqual([]);
      const unexact = h.emissions.filter((e) => !h.clean(e) || h.staleMemberDoc(e));
      expect(unexact.filter((e) => Math.abs(h.error(e)) > 1)).toEqual([]);
      expect(h.emissions.every((e) => e.view.exists && e.value !== null)).toBe(true);
      // The optimistic path was taken, and calls were held back while their coverage was unknown.
      expect(h.emissions.some((e) => e.view.pending !== 0)).toBe(true);
      console.log(
        `like schedule: ${h.changes.length} membership changes (${h.changes.filter((c) => c.origin === "device2").length} by device 2, ` +
          `${h.lost} answers lost, ${h.refused} refused); ${h.emissions.length} emissions, ${exact.length} checked exactly, ` +
          `${unexact.filter((e) => h.error(e) !== 0).length} off by one while another device's or a lost answer's change was not covered` +
          (stale.length > 0 ? `; ${stale.length} on a member document the emulator's listener delivered late` : ""),
      );
    });
  });

  it("shows a like at once, holds the rollup's snapshot back while the answer is late, and never shows the like twice", async () => {
    const counterId = `likes-hold-${Date.now()}`;
    await user.call("createCounter", { counterId, numShards: 2, unique: true });
    await others[0]!.call("setMember", { counterId, member: true });
    const h = new Harness(counterId);
    const unwatch = h.watch();
    await h.until((e) => e.view.total === 1);
    await h.tap(true, "slow-answer"); // the rollup covers the like before its answer arrives
    const final = await settled(h);
    expect(final.value).toBe(2);
    // 1 (someone else), then 2 at once with the like, and never 3
    const values = h.emissions.map((e) => [e.value, e.view.member]);
    expect(values).toEqual(expect.arrayContaining([[1, false], [2, true]]));
    expect(values.slice(values.findIndex(([v]) => v === 1))).toEqual(expect.arrayContaining([[2, true]]));
    expect(h.emissions.every((e) => e.value !== null && e.value <= 2)).toBe(true);
    // The rollup's snapshot that covers the like arrived before the answer and was held back.
    expect(h.emissions.some((e) => e.view.total === 2 && e.view.pending === 0)).toBe(true);
    expect(h.emissions.filter((e) => h.error(e) !== 0)).toEqual([]);
    unwatch();
  });

  it("a double tap (like, unlike) ends unliked and counted once at most; a repeated like changes nothing", async () => {
    const counterId = `likes-double-${Date.now()}`;
    await user.call("createCounter", { counterId, numShards: 2, unique: true });
    const h = new Harness(counterId);
    const unwatch = h.watch();
    await h.until((e) => e.view.exists);
    await Promise.all([h.tap(true, "normal"), h.tap(false, "normal")]);
    let final = await settled(h);
    expect([final.value, final.view.member]).toEqual([0, false]);
    await Promise.all([h.tap(true, "normal"), h.tap(true, "lose")]);
    final = await settled(h);
    expect([final.value, final.view.member]).toEqual([1, true]);
    const fresh = h.emissions.filter((e) => !h.staleMemberDoc(e));
    expect(fresh.every((e) => e.value === 0 || e.value === 1)).toBe(true);
    expect(fresh.filter((e) => h.error(e) !== 0)).toEqual([]);
    unwatch();
  });

  it("shows null for a counter that does not exist, and setMember on it rejects with not-found", async () => {
    const counterId = `likes-missing-${Date.now()}`;
    const h = new Harness(counterId);
    const unwatch = h.watch();
    await h.until(() => true);
    await expect(h.client.setMember(counterId, true)).rejects.toMatchObject({ name: "SetMemberError", code: "not-found", maybeApplied: false });
    expect(h.emissions.map((e) => e.value)).toEqual(h.emissions.map(() => null));
    unwatch();
  });
});
