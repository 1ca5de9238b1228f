// Unique counters (likes) in the client: setMember() with the client's retry policy, its calls of
// one counter sent one at a time so that the last tap decides, and watchMember(), which shows the count
// and the signed-in user's own membership together, exactly: it listens to the counter, the user's
// membership record and member document, and reads them as one cut (see member-coverage.ts for the
// argument).
import { doc, onSnapshot, onSnapshotsInSync, type DocumentSnapshot, type Firestore } from "firebase/firestore";
import { asTime, type CounterSnapshotState, type Time } from "./coverage.js";
import { basisOf, holds, memberValue, readMembershipRecord, serverMember, type Basis, type MemberCut, type MembershipRecord, type OwnChange, type PendingCall } from "./member-coverage.js";
import { SetMemberError } from "./failure.js";
import { tellMissing } from "./missing.js";
import { createRegistry, tell, type Watcher } from "./registry.js";
import { retrying, type RetryPolicy } from "./retry.js";

export { SetMemberError } from "./failure.js";

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

/** What a membership watcher receives besides the value. */
export interface MemberView {
  counterId: string;
  /** The user whose membership is shown (the uid passed to watchMember). */
  uid: string;
  /** False while `counters/{counterId}` does not exist (then `value` is null). */
  exists: boolean;
  /** The membership to show ("you like this"): the last tap's while calls are pending, else the server's. */
  member: boolean;
  /**
   * The server's `total` this value is based on (0 when the counter does not exist): the newest total for
   * which the user's own membership at `coveredUntil` is known (see member-coverage.ts).
   */
  total: number;
  /** Every change committed at or before this time is in `total`: max(rollup.readTime, createdAt). */
  coveredUntil: Time | null;
  /**
   * The server's membership in the newest snapshot: the membership record's `member`, or, for a user
   * whose record does not exist, whether the member document exists.
   */
  memberDoc: boolean;
  /** value − total: the shown membership's difference to what `total` holds of this user. */
  pending: number;
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

/** A watch of the counter for one user (every watch of a counter is for the same user). */
interface MemberWatcher extends Watcher<MemberView> {
  uid: string;
  autoCreated: boolean;
  /** Told that the counter is missing (missing.ts), once per absence. */
  toldMissing: boolean;
}

/** A listened document as last delivered: its value, and whether the SDK had it from its cache. */
interface Delivered<T> {
  value: T;
  fromCache: boolean;
}

/** What the client knows about one unique counter and one user. */
interface State {
  /** This client's last change (`changed: true` answer), kept until a cut's record holds it. */
  last: OwnChange | undefined;
  /** Calls not answered yet, in the order they go out (one at a time). */
  calls: PendingCall[];
  /** The newest coveredUntil of any counter snapshot received. */
  seenUntil: Time | null;
  counter: Delivered<CounterSnapshotState> | undefined;
  /** The membership record (null: it does not exist). */
  record: Delivered<MembershipRecord | null> | undefined;
  memberDoc: Delivered<boolean> | undefined;
  /** The last consistent cut (all three from the server, in sync). */
  cut: MemberCut | undefined;
  /** The newest cut of the counter as it exists now whose M(R) was known. */
  basis: Basis | undefined;
  /** The end of the chain of this counter's calls (the next one is sent after it). */
  tail: Promise<void>;
  watchers: Set<MemberWatcher>;
  unsubscribe: (() => void) | undefined;
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
}

export function createMembership(deps: MembershipDeps): Membership {
  const registry = createRegistry<MemberWatcher, State>({
    create: () => ({
      last: undefined,
      calls: [],
      seenUntil: null,
      counter: undefined,
      record: undefined,
      memberDoc: undefined,
      cut: undefined,
      basis: undefined,
      tail: Promise.resolve(),
      watchers: new Set(),
      unsubscribe: undefined,
    }),
    listen,
    publish,
    stopped: (state) => {
      state.counter = undefined;
      state.record = undefined;
      state.memberDoc = undefined;
      state.cut = undefined;
      state.basis = undefined;
    },
    busy: (state) => state.calls.length > 0,
  });

  function publish(counterId: string, state: State): void {
    const cut = state.cut;
    if (cut === undefined) return;
    if (!cut.exists) {
      for (const watcher of state.watchers) publishMissing(counterId, state, cut, watcher);
      return;
    }
    const shown = memberValue(cut, state.basis, state.last, state.calls);
    if (shown === null) return; // no cut with a known M(R) yet: nothing exact to show
    for (const watcher of state.watchers) {
      watcher.toldMissing = false; // found again: a later absence is told again
      const view: MemberView = {
        counterId,
        uid: watcher.uid,
        exists: cut.exists,
        member: shown.member,
        total: shown.total,
        coveredUntil: shown.coveredUntil,
        memberDoc: serverMember(cut),
        pending: shown.pending,
      };
      tell(watcher, shown.value, view);
    }
  }

  /**
   * A counter that does not exist has no members. Auto-created (WatchMemberOptions): this user's like to
   * show (a pending call's, or an answered change that no counter holds yet: the one this call's like
   * creates, before its snapshot arrives) counted alone. Otherwise null, told to onError once (cuts come
   * from the server only).
   */
  function publishMissing(counterId: string, state: State, cut: MemberCut, watcher: MemberWatcher): void {
    const member = state.calls[state.calls.length - 1]?.member ?? state.last?.member ?? false;
    const view = { counterId, uid: watcher.uid, exists: false, member, total: 0, coveredUntil: null, memberDoc: serverMember(cut) };
    if (watcher.autoCreated) {
      const value = member ? 1 : 0;
      tell(watcher, value, { ...view, pending: value });
      return;
    }
    tell(watcher, null, { ...view, pending: 0 });
    tellMissing(watcher, counterId);
  }

  /**
   * Every listener has fired for a change: the three documents are from the same server snapshot, unless
   * one of them comes from the cache (then the cut could pair a record older than the total: skip it).
   */
  function onInSync(counterId: string, state: State): void {
    const { counter, record, memberDoc } = state;
    if (counter === undefined || record === undefined || memberDoc === undefined) return; // nothing before all arrived
    if (counter.fromCache || record.fromCache || memberDoc.fromCache) return;
    const cut: MemberCut = { ...counter.value, record: record.value, memberDoc: memberDoc.value };
    // Deleted: an answered change of this client was made on the counter that is gone.
    if (state.cut?.exists === true && !cut.exists) state.last = undefined;
    state.cut = cut;
    // A counter that does not exist has no basis; one created again must not inherit the old one.
    state.basis = cut.exists ? (basisOf(cut) ?? state.basis) : undefined;
    if (state.last !== undefined && holds(cut.record, state.last)) state.last = undefined; // the record says from now on
    publish(counterId, state);
  }

  function onCounter(counterId: string, state: State, snap: DocumentSnapshot): void {
    const counter = registry.readCounter(counterId, state, snap);
    if (counter !== undefined) state.counter = { value: counter, fromCache: snap.metadata.fromCache };
  }

  function onRecord(counterId: string, state: State, snap: DocumentSnapshot): void {
    const record = snap.exists() ? readMembershipRecord(snap) : null;
    if (record === undefined) {
      registry.fail(state, new Error(`counters/${counterId}/memberships/${snap.id} is malformed`));
      return;
    }
    state.record = { value: record, fromCache: snap.metadata.fromCache };
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
      if (changed && writeTime !== null) {
        // Shown until a cut's record holds it, so the like does not flicker back while the record is late.
        const change = { member, writeTime };
        state.last = holds(state.cut?.record ?? null, change) ? undefined : change;
      } else if (state.last !== undefined && state.last.member !== member) {
        // Unchanged, and the server says `member`: an older own change to the opposite is not the
        // membership any more (a lost answer made this one, at a time no answer carries): the record says.
        state.last = undefined;
      }
      publish(counterId, state);
      return { counterId, member, changed, writeTime: changed ? writeTime : null, attempts: result.attempts };
    } finally {
      done();
      registry.forgetIfIdle(counterId, state);
    }
  }

  /** The listeners of a counter for the user of its first watcher (watchMember keeps the others to that user). */
  function listen(counterId: string, state: State, { uid }: MemberWatcher): () => void {
    const fail = (error: Error) => registry.fail(state, error);
    // With metadata changes: a snapshot that stops coming from the cache (the server brought the target
    // up to date again) changes no data, and without them the cut would wait for the next change.
    const options = { includeMetadataChanges: true };
    const counter = doc(deps.firestore, "counters", counterId);
    const stops = [
      onSnapshot(counter, options, (snap) => onCounter(counterId, state, snap), fail),
      onSnapshot(doc(counter, "memberships", uid), options, (snap) => onRecord(counterId, state, snap), fail),
      onSnapshot(
        doc(counter, "members", uid),
        options,
        (snap) => {
          state.memberDoc = { value: snap.exists(), fromCache: snap.metadata.fromCache };
        },
        fail,
      ),
      // Fires once every listener affected by a change has fired: the documents are then from the same
      // server snapshot, so a change the total covers is also in the record.
      onSnapshotsInSync(deps.firestore, () => onInSync(counterId, state)),
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

  return { setMember, watchMember, dispose: registry.dispose };
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
