// Unique counters (DESIGN.md, "Unique counters"): which counters are unique, and their membership. A
// member is a document counters/{id}/members/{uid}; joining or leaving writes that document and a ±1 on
// one shard in ONE batch, with a precondition on the member document. So the shards' sum moves exactly
// with the number of member documents, whatever the interleaving of calls, and a repeated, concurrent or
// retried call finds the precondition false and writes nothing. No transaction (which would lock the
// parent and the shards against the rollup and other likes), no idempotency key.
import { FieldValue, type Firestore, type Timestamp } from "firebase-admin/firestore";
import { backoffMs, pause } from "./backoff";
import { CounterError, GRPC, grpcCode } from "./errors";
import { counterRef, memberRef, shardRef } from "./paths";
import { matchesAny, type Template } from "./patterns";
import { shapeIn } from "./shape";
import { pickShard, type Random } from "./shards";
import { writeTimeOf, type WriteTime } from "./store";

/**
 * Whether a new counter is unique: as requested, or, when `unique` is omitted, whether its id matches
 * UNIQUE_COUNTERS. An id that matches can never be plain (`unique: false` is invalid-argument): otherwise
 * anyone could create a post's likes counter as a plain counter first and inflate it with increments.
 */
export function uniqueFor(counterId: string, requested: boolean | undefined, patterns: readonly Template[]): boolean {
  const reserved = matchesAny(patterns, counterId);
  if (reserved && requested === false) {
    // The id is not echoed: the message names the field, as every validation message does.
    throw new CounterError("invalid-argument", "unique must be true or omitted: this counter id is reserved for unique counters (UNIQUE_COUNTERS)");
  }
  return requested ?? reserved;
}

export interface SetMemberResult {
  counterId: string;
  member: boolean;
  /** This call changed the caller's membership (and the shard sum, in the same commit). */
  changed: boolean;
  /** The commit time of that change; null when nothing was written. */
  writeTime: WriteTime | null;
}

export interface SetMemberOptions {
  random?: Random;
  /** Runs after the batch committed and before the answer; tests throw from it to lose the answer. */
  onCommitted?: () => void | Promise<void>;
}

/** Rounds of read-then-commit before giving up: each lost race costs one (see setMember). */
const SET_MEMBER_ATTEMPTS = 10;

/** The backoff step after a lost race (backoff.ts): calls of one user racing each other (two devices, a
 * double tap) would otherwise read and collide in lockstep. */
const BACKOFF_STEP_MS = 5;

/**
 * Makes `uid` a member of the unique counter (`member: true`) or not (`false`). Changes it only if the
 * membership differs; then the member document (created, or deleted on condition that it is the version
 * read) and `increment(±1)` on a random shard (`update()`, which fails on a missing shard) commit in one
 * batch, and the answer carries the commit time. Otherwise nothing is written.
 *
 * The parent and the member document are read together, fresh, in one consistent read, not from the shape
 * cache that incrementCounter uses: a cached `unique` may be up to 5 s stale, and a stale one would let a
 * join land on a counter deleted and re-created as plain meanwhile (a member document and a +1 it must
 * never have). A fresh read narrows that to the milliseconds between this read and the commit.
 *
 * A failed commit means the world changed since the read: another call of the same user joined first
 * (ALREADY_EXISTS) or left or re-joined (FAILED_PRECONDITION on the member document), or the shard is gone
 * (NOT_FOUND: a reshard down, or the counter was deleted). Each is settled by reading again: the answer is
 * then "unchanged", a retry on a kept shard, or not-found. A leave's precondition is the member document's
 * update time, so it can only ever remove the membership it read, of the counter that exists at the
 * commit (a deleted counter has no shards, so no leave or join can commit on it).
 */
export async function setMember(
  db: Firestore,
  counterId: string,
  uid: string,
  member: boolean,
  options: SetMemberOptions = {},
): Promise<SetMemberResult> {
  const random = options.random ?? Math.random;
  const ref = memberRef(db, counterId, memberDocumentId(uid));
  for (let attempt = 0; attempt < SET_MEMBER_ATTEMPTS; attempt++) {
    if (attempt > 0) await pause(backoffMs(attempt, random, BACKOFF_STEP_MS));
    const [parent, current] = await db.getAll(counterRef(db, counterId), ref);
    const { numShards, unique } = shapeIn(counterId, parent!);
    if (!unique) {
      throw new CounterError("failed-precondition", `setMember: counter "${counterId}" is not a unique counter; use incrementCounter`);
    }
    if (current!.exists === member) return { counterId, member, changed: false, writeTime: null };

    const batch = db.batch();
    if (member) batch.create(ref, {});
    else batch.delete(ref, { lastUpdateTime: current!.updateTime! });
    batch.update(shardRef(db, counterId, pickShard(numShards, random)), { count: FieldValue.increment(member ? 1 : -1) });
    let committedAt: Timestamp;
    try {
      const [result] = await batch.commit(); // every write of a batch carries the batch's commit time
      committedAt = result!.writeTime;
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC.ALREADY_EXISTS || code === GRPC.FAILED_PRECONDITION || code === GRPC.NOT_FOUND) continue;
      throw error;
    }
    await options.onCommitted?.();
    return { counterId, member, changed: true, writeTime: writeTimeOf(committedAt) };
  }
  throw new CounterError("aborted", `setMember: counter "${counterId}" kept changing; try again`);
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
