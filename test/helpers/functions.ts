// The functions under test, imported after firebase-functions-test has set the project, plus the ways
// tests drive them: call(callable, data, auth) and deliver(trigger event).
import { randomUUID } from "node:crypto";
import { getFirestore, FieldValue, type DocumentSnapshot, type Timestamp } from "firebase-admin/firestore";
import { HttpsError, type CallableFunction } from "firebase-functions/v2/https";
// ./wrapped must run before ../../src/index; jest's emulator tier also loads it as a setup file, so this
// holds even if these imports are reordered.
import { fft } from "./wrapped";
import * as functions from "../../functions/src/index";
import { defaultApp } from "../../functions/src/default-app";
import { counterRef, shardRef } from "../../functions/src/model/paths";
import { pathsUnderIn, shardSumIn } from "./documents";
import { withConcurrency } from "./client";

export { functions };
// The default admin app as the functions find it: the package initializes none on import (functions/src/entry/deps.ts).
export const db = getFirestore(defaultApp());

export interface Caller {
  uid: string;
  admin?: boolean;
  /** The ID token's firebase.sign_in_provider; "password" unless set (every real token names one). */
  provider?: string;
}

export const USER: Caller = { uid: "user-1" };
export const ADMIN: Caller = { uid: "admin-1", admin: true };
export const ANONYMOUS: Caller = { uid: "anon-1", provider: "anonymous" };

/** Calls a callable the way the platform would after verifying the caller's ID token. */
export function call<R = unknown>(
  fn: CallableFunction<unknown, Promise<unknown>>,
  data: unknown,
  caller: Caller | null = USER,
  app?: { appId: string },
): Promise<R> {
  const auth =
    caller === null
      ? undefined
      : {
          uid: caller.uid,
          token: {
            uid: caller.uid,
            firebase: { sign_in_provider: caller.provider ?? "password" },
            ...(caller.admin ? { admin: true } : {}),
          },
        };
  const wrapped = fft.wrap(fn) as unknown as (request: Record<string, unknown>) => Promise<R>;
  return wrapped({ data, auth, ...(app ? { app: { appId: app.appId, token: {} } } : {}) });
}

/** A counter id no other test uses. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** A real shard write on the emulator with its before/after snapshots (no other writer on that shard). */
export interface RecordedWrite {
  counterId: string;
  shardId: string;
  before: DocumentSnapshot;
  after: DocumentSnapshot;
  eventId: string;
  time: string;
}

/** Applies `delta` to a shard (creating it if needed) and records the event the write produces. */
export async function writeShard(counterId: string, shardId: string | number, delta: number): Promise<RecordedWrite> {
  const ref = shardRef(db, counterId, shardId);
  const before = await ref.get();
  const result = await ref.set({ count: FieldValue.increment(delta) }, { merge: true });
  const after = await ref.get();
  return recorded(counterId, String(shardId), before, after, result.writeTime);
}

/** Deletes a shard and records the event. */
export async function deleteShard(counterId: string, shardId: string | number): Promise<RecordedWrite> {
  const ref = shardRef(db, counterId, shardId);
  const before = await ref.get();
  const result = await ref.delete();
  const after = await ref.get();
  return recorded(counterId, String(shardId), before, after, result.writeTime);
}

function recorded(
  counterId: string,
  shardId: string,
  before: DocumentSnapshot,
  after: DocumentSnapshot,
  writeTime: Timestamp,
): RecordedWrite {
  return { counterId, shardId, before, after, eventId: randomUUID(), time: rfc3339(writeTime) };
}

/** RFC 3339 with nanoseconds, as CloudEvents carry it. */
export function rfc3339(ts: Timestamp): string {
  const base = new Date(ts.seconds * 1000).toISOString().slice(0, 19);
  return `${base}.${String(ts.nanoseconds).padStart(9, "0")}Z`;
}

/** Delivers the trigger event of a recorded write to the wrapped rollupTotal, as the platform would. */
export function deliver(write: RecordedWrite): Promise<unknown> {
  const wrapped = fft.wrap(functions.rollupTotal) as unknown as (event: Record<string, unknown>) => Promise<unknown>;
  return wrapped({
    data: fft.makeChange(write.before, write.after),
    params: { counterId: write.counterId, shardId: write.shardId },
    id: write.eventId,
    time: write.time,
  });
}

/** The parent document's fields that tests assert on. */
export async function readCounter(counterId: string): Promise<{
  exists: boolean;
  total?: number;
  numShards?: number;
  commits?: number;
}> {
  const snap = await counterRef(db, counterId).get();
  if (!snap.exists) return { exists: false };
  return {
    exists: true,
    total: snap.get("total") as number,
    numShards: snap.get("numShards") as number,
    commits: (snap.get("rollup.commits") as number | undefined) ?? 0,
  };
}

/** Σ count over the shards, read directly. */
export function shardSum(counterId: string): Promise<number> {
  return shardSumIn(db, counterId);
}

/** Every document path under counters/{id}, including subcollections: proves "nothing written". */
export function documentsUnder(counterId: string): Promise<string[]> {
  return pathsUnderIn(db, counterId);
}

/** Creates a counter through the wrapped createCounter and returns its (unique) id. */
export async function newCounter(prefix: string, numShards: number): Promise<string> {
  const counterId = uniqueId(prefix);
  await call(functions.createCounter, { counterId, numShards });
  return counterId;
}

/** The HttpsError a call was rejected with; fails the test if it resolved or threw something else. */
export async function httpsErrorOf(promise: Promise<unknown>): Promise<HttpsError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpsError);
  return error as HttpsError;
}

/** Sets a param for each test of the enclosing describe (params are read at request time). */
export function withParam(name: string, value: string): void {
  let previous: string | undefined;
  beforeEach(() => {
    previous = process.env[name];
    process.env[name] = value;
  });
  afterEach(() => {
    if (previous === undefined) delete process.env[name];
    else process.env[name] = previous;
  });
}

/** One call of a race: when it started and how it ended (its outcome, or its HttpsError code). */
export interface RaceOutcome {
  startedAt: number;
  outcome: string;
}

/**
 * Runs `count` calls of `operation`, 8 at a time, and starts deleteCounter (as an admin) just before call
 * number `deleteAt`. Answers every call's outcome and when the delete returned.
 */
export async function raceWithDelete(
  counterId: string,
  count: number,
  deleteAt: number,
  operation: (i: number) => Promise<string>,
): Promise<{ outcomes: RaceOutcome[]; deletedAt: number }> {
  let deleted: Promise<unknown> | undefined;
  let deletedAt = Number.POSITIVE_INFINITY;
  const outcomes = await withConcurrency(
    8,
    Array.from({ length: count }, (_, i) => async (): Promise<RaceOutcome> => {
      if (i === deleteAt) deleted = call(functions.deleteCounter, { counterId }, ADMIN).then(() => (deletedAt = Date.now()));
      if (i === count - 1) await deleted; // at least one operation comes after the delete, however fast the others ran
      const startedAt = Date.now();
      try {
        return { startedAt, outcome: await operation(i) };
      } catch (error) {
        if (!(error instanceof HttpsError)) throw error;
        return { startedAt, outcome: error.code };
      }
    }),
  );
  await deleted;
  return { outcomes, deletedAt };
}
