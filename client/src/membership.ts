// Unique counters (likes) in the client: setMember() with the client's retry policy, its calls of
// one counter sent one at a time so that the last tap decides, and watchMember(), which shows the count
// and the signed-in user's own membership together, exactly: it listens to the counter, the user's
// membership record and member document, and reads them as one cut (see member-coverage.ts for the
// argument). This file holds the listeners and the calls; what they change and what a watcher is shown
// is membership-state.ts's, pure.
import { doc, onSnapshot, onSnapshotsInSync, type Firestore } from "firebase/firestore";
import { asTime, type Time } from "./coverage.js";
import { readMembershipRecord, type PendingCall } from "./member-coverage.js";
import { SetMemberError, SignInRequiredError } from "./failure.js";
import { forgetDelivered, freshMemberState, memberShownTo, settleChange, takeCut, type MemberState, type MemberView, type MemberWatcher } from "./membership-state.js";
import { tellMissing } from "./missing.js";
import { createRegistry, tell, type Listening } from "./registry.js";
import { retrying, type RetryPolicy } from "./retry.js";

export { SetMemberError, SignInRequiredError } from "./failure.js";
export type { MemberView } from "./membership-state.js";

/** The data `setMember` receives. */
export interface SetMemberRequest {
  counterId: string;
  member: boolean;
}

/** What a successful setMember resolves with. */
export interface SetMemberOutcome {
  counterId: string;
  member: boolean;
  /** True when this call changed the membership; then `writeTime` is that commit's time. */
  changed: boolean;
  writeTime: Time | null;
  /** Calls made, retries included. */
  attempts: number;
}

export interface MembershipDeps {
  firestore: Firestore;
  call: (request: SetMemberRequest) => Promise<unknown>;
  retry: RetryPolicy;
}

/** The fifth argument of `watchMember`. */
export interface WatchMemberOptions {
  /**
   * The counter is created by its first like (the server's AUTO_CREATE): while it does not exist, show 0
   * plus this user's like, and tell `onError` nothing. Without it, a counter that does not exist is shown
   * as null and told to `onError` (a CounterNotFoundError).
   */
  autoCreated?: boolean;
}

export interface Membership {
  setMember: (counterId: string, member: boolean) => Promise<SetMemberOutcome>;
  watchMember: (
    counterId: string,
    uid: string,
    onValue: (value: number | null, view: MemberView) => void,
    onError?: (error: Error) => void,
    options?: WatchMemberOptions,
  ) => () => void;
  dispose: () => void;
  /** The registry's count of open listeners and their watchers. */
  listening: () => Listening;
}

export function createMembership(deps: MembershipDeps): Membership {
  const registry = createRegistry<MemberWatcher, MemberState>({
    create: freshMemberState,
    listen,
    publish,
    stopped: forgetDelivered,
    busy: (state) => state.calls.length > 0,
  });

  /** Tells each watcher what membership-state.ts says it is to be shown now, if it changed. */
  function publish(counterId: string, state: MemberState): void {
    for (const watcher of state.watchers) {
      const shown = memberShownTo(counterId, state, watcher);
      if (shown === undefined) continue;
      if (shown.found) watcher.toldMissing = false; // found again: a later absence is told again
      tell(watcher, shown.value, shown.view);
      if (shown.missing) tellMissing(watcher, counterId);
    }
  }

  async function setMember(counterId: string, member: boolean): Promise<SetMemberOutcome> {
    if (typeof member !== "boolean") throw new TypeError("member must be a boolean");
    const state = registry.stateOf(counterId);
    const call: PendingCall = { member };
    state.calls.push(call);
    publish(counterId, state);

    // One call at a time per counter: a like racing an unlike from this client would otherwise commit in
    // either order; in order, the last tap decides the membership.
    const previous = state.tail;
    let done!: () => void;
    state.tail = new Promise<void>((resolve) => (done = resolve));
    await previous;
    try {
      const result = await retrying(async () => {
        const answer = parseAnswer(await deps.call({ counterId, member }));
        // Unexpected, so treated as transient (code "unknown"): setMember is idempotent, a retry is safe.
        if (answer === null) throw new Error("setMember answered without changed/writeTime");
        return answer;
      }, deps.retry);
      state.calls.shift();
      if ("error" in result) {
        // Refused, or out of attempts: the membership shown is the server's again (an attempt that did
        // commit shows through the record).
        publish(counterId, state);
        throw new SetMemberError(result.code, counterId, member, result.maybeApplied, { cause: result.error });
      }
      const { changed, writeTime } = result.value;
      settleChange(state, member, changed, writeTime);
      publish(counterId, state);
      return { counterId, member, changed, writeTime: changed ? writeTime : null, attempts: result.attempts };
    } finally {
      done();
      registry.forgetIfIdle(counterId, state);
    }
  }

  /** The listeners of a counter for the user of its first watcher (watchMember keeps the others to that user). */
  function listen(counterId: string, state: MemberState, { uid }: MemberWatcher): () => void {
    const fail = (error: Error) => registry.fail(state, error);
    // The user's own documents, refused: the rules let only that user, signed in, read them. Told once (as
    // the client's SignInRequiredError, not Firestore's "Missing or insufficient permissions"), though both
    // listeners are refused.
    let refusalTold = false;
    const failOwn = (error: Error) => {
      if ((error as { code?: unknown }).code !== "permission-denied") return fail(error);
      if (refusalTold) return;
      refusalTold = true;
      const reason =
        `Firestore lets only the user ${uid}, signed in to the client's Firebase app, read their like, and refused it ` +
        "(permission-denied): no user is signed in, or another one is";
      fail(new SignInRequiredError(counterId, `watchMember(${counterId}, ${uid})`, reason, { cause: error }));
    };
    // With metadata changes: a snapshot that stops coming from the cache (the server brought the target
    // up to date again) changes no data, and without them the cut would wait for the next change.
    const options = { includeMetadataChanges: true };
    const counter = doc(deps.firestore, "counters", counterId);
    const stops = [
      onSnapshot(
        counter,
        options,
        (snap) => {
          const read = registry.readCounter(counterId, state, snap);
          if (read !== undefined) state.counter = { value: read, fromCache: snap.metadata.fromCache };
        },
        fail,
      ),
      onSnapshot(
        doc(counter, "memberships", uid),
        options,
        (snap) => {
          const record = snap.exists() ? readMembershipRecord(snap) : null;
          if (record === undefined) fail(new Error(`counters/${counterId}/memberships/${snap.id} is malformed`));
          else state.record = { value: record, fromCache: snap.metadata.fromCache };
        },
        failOwn,
      ),
      onSnapshot(
        doc(counter, "members", uid),
        options,
        (snap) => {
          state.memberDoc = { value: snap.exists(), fromCache: snap.metadata.fromCache };
        },
        failOwn,
      ),
      // Fires once every listener affected by a change has fired: the documents are then from the same
      // server snapshot, so a change the total covers is also in the record.
      onSnapshotsInSync(deps.firestore, () => {
        if (takeCut(state)) publish(counterId, state);
      }),
    ];
    return () => stops.forEach((stop) => stop());
  }

  function watchMember(
    counterId: string,
    uid: string,
    onValue: (value: number | null, view: MemberView) => void,
    onError?: (error: Error) => void,
    options?: WatchMemberOptions,
  ): () => void {
    const uids = new Set([...registry.stateOf(counterId).watchers].map((w) => w.uid));
    if (uids.size > 0 && !uids.has(uid)) throw new Error(`counter ${counterId} is already watched for another user; stop that watch first`);
    return registry.watch(counterId, { uid, onValue, onError, last: undefined, autoCreated: options?.autoCreated === true, toldMissing: false });
  }

  return { setMember, watchMember, dispose: registry.dispose, listening: registry.listening };
}

/** The fields of a setMember answer the client needs, or null if it does not have them. */
function parseAnswer(data: unknown): { changed: boolean; writeTime: Time | null } | null {
  if (typeof data !== "object" || data === null) return null;
  const { changed, writeTime } = data as { changed?: unknown; writeTime?: unknown };
  if (changed === false) return { changed, writeTime: null };
  const time = asTime(writeTime);
  if (changed !== true || time === null) return null;
  return { changed, writeTime: time };
}
