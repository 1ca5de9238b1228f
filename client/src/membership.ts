// Unique counters (likes) in the client: setMember() with the retry policy of increment(), its calls of
// one counter sent one at a time so that the last tap decides, and watchMember(), which shows the count
// and the signed-in user's own membership together, exactly (see member-coverage.ts for the argument).
import { doc, onSnapshot, onSnapshotsInSync, type DocumentSnapshot, type Firestore } from "firebase/firestore";
import { asTime, isCovered, readCounterSnapshot, type Time } from "./coverage.js";
import { knownMember, memberValue, type MemberCut, type OwnChange, type PendingCall } from "./member-coverage.js";
import { failureMessage, reasonOf } from "./failure.js";

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
  /** The server's `total` this value is based on (0 when the counter does not exist). */
  total: number;
  /** Every change committed at or before this time is in `total`: max(rollup.readTime, createdAt). */
  coveredUntil: Time | null;
  /** Whether the member document exists in the snapshot this view is based on. */
  memberDoc: boolean;
  /** value − total: this client's own changes not in `total` yet. */
  pending: number;
}

/** A setMember that did not succeed (the membership shown goes back to what it was). */
export class SetMemberError extends Error {
  constructor(
    /** The callable error code without the "functions/" prefix, or "unknown". */
    readonly code: string,
    readonly counterId: string,
    readonly member: boolean,
    /** True when an attempt may have changed the membership although no answer said so. */
    readonly maybeApplied: boolean,
    /** `cause`: the last rejection, whose message (the server's) the message repeats; `reason`: the client's own. */
    options?: { cause?: unknown; reason?: string },
  ) {
    super(failureMessage(`setMember(${counterId}, ${member})`, code, options?.reason ?? reasonOf(options?.cause)), { cause: options?.cause });
    this.name = "SetMemberError";
  }
}

export interface MembershipDeps {
  firestore: Firestore;
  call: (request: SetMemberRequest) => Promise<unknown>;
  /** Runs `attempt` with the client's retry policy; `attempt` throws to fail, returns to succeed. */
  retry: <T>(attempt: () => Promise<T>) => Promise<{ value: T; attempts: number } | { error: unknown; code: string; maybeApplied: boolean }>;
}

interface Watcher {
  uid: string;
  onValue: (value: number | null, view: MemberView) => void;
  onError: ((error: Error) => void) | undefined;
  last: string | undefined;
}

/** What the client knows about one unique counter and one user. */
interface State {
  /** This client's changes (`changed: true` answers) not yet covered by a snapshot it has seen. */
  own: OwnChange[];
  /** Calls not answered yet, in the order they go out (one at a time). */
  calls: PendingCall[];
  /** The newest coveredUntil of any counter snapshot received. */
  seenUntil: Time | null;
  counter: { exists: boolean; total: number; coveredUntil: Time | null } | undefined;
  memberDoc: boolean | undefined;
  /** The last published cut (both snapshots arrived and were in sync). */
  cut: MemberCut | undefined;
  /** The end of the chain of this counter's calls (the next one is sent after it). */
  tail: Promise<void>;
  watchers: Set<Watcher>;
  unsubscribe: (() => void) | undefined;
}

export interface Membership {
  setMember: (counterId: string, member: boolean) => Promise<SetMemberOutcome>;
  watchMember: (
    counterId: string,
    uid: string,
    onValue: (value: number | null, view: MemberView) => void,
    onError?: (error: Error) => void,
  ) => () => void;
  dispose: () => void;
}

export function createMembership(deps: MembershipDeps): Membership {
  const states = new Map<string, State>();

  function stateOf(counterId: string): State {
    let state = states.get(counterId);
    if (state === undefined) {
      state = {
        own: [],
        calls: [],
        seenUntil: null,
        counter: undefined,
        memberDoc: undefined,
        cut: undefined,
        tail: Promise.resolve(),
        watchers: new Set(),
        unsubscribe: undefined,
      };
      states.set(counterId, state);
    }
    return state;
  }

  function forgetIfIdle(counterId: string, state: State): void {
    if (state.watchers.size === 0 && state.calls.length === 0) states.delete(counterId);
  }

  function publish(counterId: string, state: State): void {
    const cut = state.cut;
    if (cut === undefined) return;
    const shown = memberValue(cut, state.own, state.calls);
    if (shown === null) return; // a call in flight may or may not be in this total: wait for its answer
    for (const watcher of state.watchers) {
      const view: MemberView = {
        counterId,
        uid: watcher.uid,
        exists: cut.exists,
        member: shown.member,
        total: cut.total,
        coveredUntil: cut.coveredUntil,
        memberDoc: cut.memberDoc,
        pending: shown.pending,
      };
      const key = JSON.stringify([shown.value, view]);
      if (watcher.last === key) continue;
      watcher.last = key;
      watcher.onValue(shown.value, view);
    }
  }

  /** Both listeners have fired for the same change: their snapshots form one consistent cut. */
  function onInSync(counterId: string, state: State): void {
    if (state.counter === undefined || state.memberDoc === undefined) return; // nothing before both arrived
    state.cut = { ...state.counter, memberDoc: state.memberDoc };
    state.own = state.own.filter((c) => !isCovered(state.cut!.coveredUntil, c.writeTime));
    publish(counterId, state);
  }

  function onCounter(counterId: string, state: State, snap: DocumentSnapshot): void {
    const read = readCounterSnapshot(snap, state.seenUntil);
    if (read.kind === "malformed") {
      for (const watcher of state.watchers) watcher.onError?.(new Error(`counters/${counterId} has no integer total`));
      return;
    }
    if (read.kind === "stale") return;
    state.seenUntil = read.seenUntil;
    state.counter = read.state;
  }

  async function setMember(counterId: string, member: boolean): Promise<SetMemberOutcome> {
    if (typeof member !== "boolean") throw new TypeError("member must be a boolean");
    const state = stateOf(counterId);
    const call: PendingCall = { member, sent: null };
    state.calls.push(call);
    publish(counterId, state);

    // One call at a time per counter: a like racing an unlike from this client would otherwise commit in
    // either order; in order, the last tap decides the membership.
    const previous = state.tail;
    let done!: () => void;
    state.tail = new Promise<void>((resolve) => (done = resolve));
    await previous;
    let ambiguous = false;
    let before = false;
    try {
      before = knownMember(state.cut, state.own);
      call.sent = { after: state.seenUntil, before };
      const result = await deps.retry(async () => {
        const answer = parseAnswer(await deps.call({ counterId, member }).catch((error: unknown) => {
          ambiguous = true; // this attempt may have committed although no answer says so
          throw error;
        }));
        // Unexpected, so treated as transient (code "unknown"): setMember is idempotent, a retry is safe.
        if (answer === null) throw new Error("setMember answered without changed/writeTime");
        return answer;
      });
      state.calls.shift();
      if ("error" in result) {
        // Refused, or out of attempts: the membership stays as it was before this call, as far as this
        // client knows (an attempt that did commit shows through the member document and the total).
        publish(counterId, state);
        throw new SetMemberError(result.code, counterId, member, result.maybeApplied, { cause: result.error });
      }
      const { changed, writeTime } = result.value;
      if (changed && writeTime !== null) {
        if (!isCovered(state.cut?.coveredUntil ?? null, writeTime)) state.own.push({ member, writeTime });
      } else if (ambiguous && before !== member) {
        // A lost answer: an earlier attempt made this change at a time no answer carries. This client's
        // own changes can no longer be placed against the rollup: show the server's values for this user
        // (member document, total) until its next change. Never counts twice; may show the like late.
        state.own = [];
      }
      publish(counterId, state);
      return { counterId, member, changed, writeTime: changed ? writeTime : null, attempts: result.attempts };
    } finally {
      done();
      forgetIfIdle(counterId, state);
    }
  }

  function stopListening(counterId: string, state: State): void {
    state.unsubscribe?.();
    state.unsubscribe = undefined;
    state.counter = undefined;
    state.memberDoc = undefined;
    state.cut = undefined;
    forgetIfIdle(counterId, state);
  }

  function watchMember(
    counterId: string,
    uid: string,
    onValue: (value: number | null, view: MemberView) => void,
    onError?: (error: Error) => void,
  ): () => void {
    const state = stateOf(counterId);
    const watcher: Watcher = { uid, onValue, onError, last: undefined };
    const uids = new Set([...state.watchers].map((w) => w.uid));
    if (uids.size > 0 && !uids.has(uid)) throw new Error(`counter ${counterId} is already watched for another user; stop that watch first`);
    state.watchers.add(watcher);
    if (state.unsubscribe === undefined) {
      const fail = (error: Error) => {
        for (const w of state.watchers) w.onError?.(error);
      };
      const stops = [
        onSnapshot(doc(deps.firestore, "counters", counterId), (snap) => onCounter(counterId, state, snap), fail),
        onSnapshot(
          doc(deps.firestore, "counters", counterId, "members", uid),
          (snap) => {
            state.memberDoc = snap.exists();
          },
          fail,
        ),
        // Fires once every listener affected by a change has fired: the counter and the member document
        // are then from the same server snapshot, so a change the total covers is also in the document.
        onSnapshotsInSync(deps.firestore, () => onInSync(counterId, state)),
      ];
      state.unsubscribe = () => stops.forEach((stop) => stop());
    } else {
      publish(counterId, state);
    }
    return () => {
      if (!state.watchers.delete(watcher)) return;
      if (state.watchers.size === 0) stopListening(counterId, state);
    };
  }

  function dispose(): void {
    for (const [counterId, state] of states) {
      state.watchers.clear();
      stopListening(counterId, state);
    }
  }

  return { setMember, watchMember, dispose };
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
