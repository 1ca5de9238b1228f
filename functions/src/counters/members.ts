// Unique counters (docs/unique-counters.md): which counters are unique, and their membership. A
// member is a document counters/{id}/members/{uid}; joining or leaving writes that document, the user's
// membership record counters/{id}/memberships/{uid} and a ±1 on one shard in ONE batch, with
// preconditions on the member document and the record. So the shards' sum moves exactly with the number
// of member documents, whatever the interleaving of calls, and a repeated, concurrent or retried call
// finds a precondition false and writes nothing. No transaction (which would lock the parent and the
// shards against the rollup and other likes), no idempotency key. writeMembership is setMember's write.
//
// The record says when the membership last changed and when it changed before that: { member, changedAt,
// previousChangedAt }, exact commit times, so that a client reading its record with the counter knows its
// own membership at the total's coverage time whatever device made the change (client/src/
// member-coverage.ts). A commit time is only known once the commit is done (serverTimestamp() is not it:
// it is taken when the request starts, and the emulator cuts it to milliseconds), so the batch writes the
// record with `changedAt: null` ("committed, time not written yet") and writeMembership then writes the batch's
// commit time into it, on condition that the record is still that version. The record is only ever
// written so, with its version read as precondition, so its versions are the user's changes in commit
// order, each pointing at the exact time of the one before.
//
// WHAT A CHANGE COSTS: 3 reads (the parent, the member document and the record, in one getAll) and 4
// writes: the member document, the record and the shard in the batch, then the record's time. The time is
// the 4th because it exists only once the batch has committed and clients see no update times (the web
// SDK shows none), so it has to be written into a field. Writing the record only after the commit (3
// writes) would break its chain: a join that read "absent" cannot tell that the same user joined and left
// in between (the member document's create() cannot), so it could point at the wrong change before it;
// the batch's precondition on the record is what tells. A record holding bounds instead of the time would
// leave other devices unable to tell a total with the change from one without it for as long as a commit
// may take to land (docs/unique-counters.md, "Limits and costs").
import { Timestamp, type DocumentReference, type DocumentSnapshot, type Firestore } from "firebase-admin/firestore";
import { backoffMs, pause } from "../model/backoff";
import { CounterError, GRPC, grpcCode } from "../model/errors";
import { counterRef, memberRef, membershipRef, shardRef } from "../model/paths";
import { dayOf } from "../model/windows";
import { createOnFirstCall, type AutoCreateLookup } from "./auto-create";
import { shapeIn, type CounterShape } from "./shape";
import { shardIncrement } from "./shard-writes";
import { pickShard, type Random } from "../model/shards";
import { timeOf, type Time } from "../model/time";

export interface SetMemberResult {
  counterId: string;
  member: boolean;
  /** This call changed the caller's membership (and the shard sum, in the same commit). */
  changed: boolean;
  /** The commit time of that change; null when nothing was written. */
  writeTime: Time | null;
}

export interface SetMemberOptions {
  random?: Random;
  /** The clock whose UTC day a windowed counter's change counts for (tests cross midnight with it). */
  now?: () => number;
  /** Runs between the read and the commit; tests change the membership there to lose a race. */
  beforeCommit?: () => void | Promise<void>;
  /** Runs between the commit and the write of its time into the record; tests change it again there. */
  beforeTimeWritten?: () => void | Promise<void>;
  /** Runs after the batch committed and before the answer; tests throw from it to lose the answer. */
  onCommitted?: () => void | Promise<void>;
  /** AUTO_CREATE: how a missing counter creates itself (auto-create.ts); asked only when it is missing. */
  autoCreate?: AutoCreateLookup | undefined;
}

/** Rounds of read-then-commit before giving up: each lost race costs one (see writeMembership). */
const SET_MEMBER_ATTEMPTS = 10;

/** The backoff step after a lost race (backoff.ts): calls of one user racing each other (two devices, a
 * double tap) would otherwise read and collide in lockstep. */
const BACKOFF_STEP_MS = 5;

/**
 * Makes `uid` a member of the unique counter (`member: true`) or not (`false`). Changes it only if the
 * membership differs; then the member document (created, or deleted on condition that it is the version
 * read), the membership record (created, or updated on condition that it is the version read) and
 * `increment(±1)` on a random shard (`update()`, which fails on a missing shard) commit in one batch, the
 * record then gets that commit's time as `changedAt`, and the answer carries it as `writeTime`. Otherwise
 * nothing is written.
 *
 * The parent, the member document and the record are read together, fresh, in one consistent read, not
 * from the shape cache that incrementCounter uses: a cached `unique` may be up to 5 s stale, and a stale
 * one would let a join land on a counter deleted and re-created as plain meanwhile (a member document and
 * a +1 it must never have). A fresh read narrows that to the milliseconds between this read and the
 * commit.
 *
 * A failed commit means the world changed since the read: another call of the same user joined first
 * (ALREADY_EXISTS) or left or re-joined (FAILED_PRECONDITION on the member document or the record), or
 * the shard is gone (NOT_FOUND: a reshard down, or the counter was deleted). Each is settled by reading
 * again: the answer is then "unchanged", a retry on a kept shard, or not-found. A leave's precondition is
 * the member document's update time, so it can only ever remove the membership it read, of the counter
 * that exists at the commit (a deleted counter has no shards, so no leave or join can commit on it). The
 * record's precondition is what keeps its chain true: a join that read "absent" may still find the member
 * document absent at its commit after another call of the same user joined and left in between (the
 * member document's create() cannot tell), but the record has changed, so the join reads again and
 * points at that leave.
 *
 * Writing the commit time into the record can find the record changed already: a later change of the
 * same user committed in between and took this change's time from the record's update time (see
 * previousChange): nothing is left to write. A transient failure is tried again; any other, or an instance
 * that dies between the commit and that write, leaves the record without its time, and clients show no
 * new count for that user meanwhile (member-coverage.ts). It heals on the next call of the user for the
 * counter: the caller's retry (which answers "unchanged") writes the time, from the record's update time,
 * which is its change's commit time as long as `changedAt` is null; a change of the other way takes that
 * time as its `previousChangedAt` and writes its own.
 */
export async function writeMembership(
  db: Firestore,
  counterId: string,
  uid: string,
  member: boolean,
  options: SetMemberOptions = {},
): Promise<SetMemberResult> {
  const random = options.random ?? Math.random;
  const id = memberDocumentId(uid);
  const ref = memberRef(db, counterId, id);
  const recordRef = membershipRef(db, counterId, id);
  let created = false;
  for (let attempt = 0; attempt < SET_MEMBER_ATTEMPTS; attempt++) {
    // A read right after this call created the counter lost no race: no backoff before it.
    if (attempt > 0 && !created) await pause(backoffMs(attempt, random, BACKOFF_STEP_MS));
    created = false;
    const [parent, current, record] = await db.getAll(counterRef(db, counterId), ref, recordRef);
    const auto = parent!.exists ? undefined : options.autoCreate?.();
    if (auto !== undefined) {
      await createOnFirstCall(db, counterId, auto, refusePlain(counterId));
      created = true;
      continue;
    }
    const shape = shapeIn(counterId, parent!);
    const refusal = refusePlain(counterId)(shape);
    if (refusal !== undefined) throw refusal;
    const { numShards, windowed } = shape;
    if (current!.exists === member) {
      // Unchanged. The change that made it so may never have got its time (see above): a retry writes it.
      const unwritten = record!.exists && record!.get("member") === member && record!.get("changedAt") === null;
      if (unwritten) await writeChangeTime(recordRef, record!.updateTime!);
      return { counterId, member, changed: false, writeTime: null };
    }

    const batch = db.batch();
    if (member) batch.create(ref, {});
    else batch.delete(ref, { lastUpdateTime: current!.updateTime! });
    const change = { member, changedAt: null, previousChangedAt: previousChange(current!, record!) };
    if (record!.exists) batch.update(recordRef, change, { lastUpdateTime: record!.updateTime! });
    else batch.create(recordRef, change);
    await options.beforeCommit?.();
    // The day is read from the clock right before the commit (model/windows.ts: DAY_CLOSES_AFTER_MS).
    const day = windowed ? dayOf((options.now ?? Date.now)()) : null;
    batch.update(shardRef(db, counterId, pickShard(numShards, random)), shardIncrement(member ? 1 : -1, day));
    let committedAt: Timestamp;
    try {
      const [result] = await batch.commit(); // every write of a batch carries the batch's commit time
      committedAt = result!.writeTime;
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC.ALREADY_EXISTS || code === GRPC.FAILED_PRECONDITION || code === GRPC.NOT_FOUND) continue;
      throw error;
    }
    await options.beforeTimeWritten?.();
    await writeChangeTime(recordRef, committedAt);
    await options.onCommitted?.();
    return { counterId, member, changed: true, writeTime: timeOf(committedAt) };
  }
  throw new CounterError("aborted", `setMember: counter "${counterId}" kept changing; try again`);
}

/** Attempts of the write of a change's time when Firestore answers with a transient error. */
const TIME_WRITE_ATTEMPTS = 3;
/** gRPC codes worth another attempt of that write: unavailable, deadline exceeded, aborted, internal, resource exhausted. */
const TRANSIENT = new Set([14, 4, 10, 13, 8]);

/**
 * Writes the commit time `at` of the batch that last wrote the record (whose update time it is) into its
 * `changedAt`, on condition that the record is still that version. A record changed again since (another
 * change took this time as its `previousChangedAt`) or deleted (with its counter) needs nothing more.
 */
async function writeChangeTime(ref: DocumentReference, at: Timestamp): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await ref.update({ changedAt: at }, { lastUpdateTime: at });
      return;
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC.FAILED_PRECONDITION || code === GRPC.NOT_FOUND) return;
      if (attempt >= TIME_WRITE_ATTEMPTS || code === undefined || !TRANSIENT.has(code)) throw error;
      await pause(backoffMs(attempt, Math.random, 20));
    }
  }
}

/**
 * setMember's refusal of a plain counter (also before one is auto-created), with the fix: the kind is
 * fixed when a counter is created, by `unique` or UNIQUE_COUNTERS.
 */
function refusePlain(counterId: string): (shape: CounterShape) => CounterError | undefined {
  return (shape) =>
    shape.unique
      ? undefined
      : new CounterError(
          "failed-precondition",
          `setMember: counter "${counterId}" is a plain counter: only unique counters count members. A counter keeps the kind it was ` +
            "created with: to make ids like this one unique, add their pattern to UNIQUE_COUNTERS (in the counters codebase's .env), " +
            "then delete this counter and create it again; or count it with incrementCounter",
        );
}

/**
 * When the membership read (the member document's existence) began, exactly: the record's `changedAt`
 * when the record says the same membership, or, while its time is not written yet, the record's update
 * time (the last write to a record without `changedAt` is the batch of its change); else the member
 * document's creation for a member (a member document that an older version wrote without a record), and
 * null, no earlier change, for a non-member. A record that contradicts the member document is not this
 * membership's history (a document left from a deleted counter of the same id, or edited by hand):
 * trusting its time could tell a client a wrong membership.
 */
function previousChange(current: DocumentSnapshot, record: DocumentSnapshot): Timestamp | null {
  if (record.exists && record.get("member") === current.exists) {
    const changedAt = record.get("changedAt") as unknown;
    return changedAt instanceof Timestamp ? changedAt : record.updateTime!;
  }
  return current.exists ? current.createTime! : null;
}

/**
 * The member document's id: the uid itself, so that the rules can let a user get exactly their own. A uid
 * that is not a valid document id (custom tokens allow "/" and more) is refused: "a/b/c" would otherwise
 * name a document somewhere else.
 */
function memberDocumentId(uid: string): string {
  const valid =
    uid.length > 0 &&
    Buffer.byteLength(uid, "utf8") <= 1500 &&
    !uid.includes("/") &&
    uid !== "." &&
    uid !== ".." &&
    !/^__.*__$/.test(uid);
  if (!valid) throw new CounterError("invalid-argument", "auth.uid cannot name a member document (it contains \"/\" or is reserved)");
  return uid;
}
