// An existing app's own data, next to the counters in one database: collections named like the backend's
// (`cleanup`, `rollup`, `shards`, `members`, `memberships`, `requests`, a nested `counters`, and
// neighbours of the backend's own ids) at several depths, with fields that look like the backend's
// (`dueAt` and `expireAt` in the past, `round`, `eventId`, `count`). The tests run the sweeps, a delete's
// cleanup and reconcile through it and check that none of it is read or changed.
import { Timestamp, type DocumentReference, type Firestore } from "firebase-admin/firestore";

/** The app's documents as written, with their update times: what "nothing changed" is checked against. */
export interface AppData {
  refs: DocumentReference[];
  /** How many documents the app keeps in collections named `cleanup` (the 450). */
  cleanups: number;
  /** How many documents the app keeps in collections named `rollup`, every one due before any lease. */
  rollups: number;
  versions: Map<string, Timestamp>;
}

const HOUR_MS = 3_600_000;

/**
 * Writes the app's data: `cleanups` documents in `jobs/{job}/cleanup/{id}` (plus a few at other depths),
 * `rollups` documents named like a lease in collections named `rollup` with a `dueAt` long past, and a
 * sample of every other colliding name.
 */
export async function seedAppData(db: Firestore, options: { cleanups: number; rollups: number }): Promise<AppData> {
  const long = Timestamp.fromMillis(Date.now() - 48 * HOUR_MS);
  const refs: DocumentReference[] = [];
  const writer = db.bulkWriter({ throttling: false });
  const put = (path: string, data: Record<string, unknown>) => {
    const ref = db.doc(path);
    refs.push(ref);
    void writer.set(ref, data);
  };

  // The jobs with their cleanup steps, and cleanups at the top level and deeper.
  for (let n = 0; n < options.cleanups; n++) put(`jobs/job-${n % 30}/cleanup/step-${n}`, { round: n % 3, startedAt: long, removed: 0, status: "done" });
  put("cleanup/pending", { round: 0, startedAt: long });
  put("orgs/o1/teams/t1/cleanup/pending", { round: 2, removed: 7 });
  put("orgs/o1/cleanups/pending", { round: 1 });

  // Rollups, every one due before any lease the tests write: the old sweep's page filled with them.
  for (let n = 0; n < options.rollups; n++) {
    const dueAt = Timestamp.fromMillis(Date.now() - 24 * HOUR_MS - n * 1000);
    if (n % 3 === 0) put(`rollup/r-${n}`, { dueAt, eventId: `app-${n}`, intervalMs: 1000 });
    else if (n % 3 === 1) put(`reports/rep-${n}/rollup/lease`, { dueAt, eventId: `app-${n}`, kind: "daily" });
    else put(`orgs/o1/reports/rep-${n}/rollup/r`, { dueAt, eventId: `app-${n}` });
  }
  put("reports/rep-x/rollups/lease", { dueAt: long, eventId: "app-plural" });
  put("reports/rep-x/leases/lease", { dueAt: long, eventId: "app-leases" });

  // The contract's names, and the idempotency records' old name, with fields that look like ours.
  for (let n = 0; n < 20; n++) {
    put(`requests/req-${n}`, { expireAt: long, shard: 0, delta: 1, createdAt: long });
    put(`users/u${n % 4}/requests/req-${n}`, { expireAt: long, body: "please" });
    put(`games/g1/shards/${n}`, { count: n });
    put(`clubs/c1/members/m-${n}`, { joinedAt: long });
    put(`clubs/c1/memberships/m-${n}`, { since: long });
  }
  // An app's own counters, nested (only the top-level `counters` collection is the backend's).
  put("users/u1/counters/steps", { numShards: 2, total: 9, createdAt: long, rollup: { readTime: long } });
  put("users/u1/counters/steps/shards/0", { count: 4 });
  put("users/u1/counters/steps/shards/1", { count: 5 });
  put("users/u1/counters/steps/rollup/lease", { dueAt: long, eventId: "app-nested" });
  put("users/u1/counters/steps/cleanup/pending", { round: 0 });
  put("users/u1/counters/steps/requests/r-1", { expireAt: long, shard: 0, delta: 1 });
  // Neighbours of the backend's own ids.
  put("audit/a1/exactCounterRequest/r-1", { expireAt: long });
  put("audit/a1/exactCounterRollups/lease", { dueAt: long });
  put("audit/a1/exactCounterCleanups/pending", { round: 0 });
  put("audit/a1/counterRollup/lease", { dueAt: long });
  await writer.close();

  return { refs, cleanups: options.cleanups, rollups: options.rollups, versions: await versionsOf(db, refs) };
}

async function versionsOf(db: Firestore, refs: DocumentReference[]): Promise<Map<string, Timestamp>> {
  const versions = new Map<string, Timestamp>();
  for (let i = 0; i < refs.length; i += 300) {
    for (const snap of await db.getAll(...refs.slice(i, i + 300))) {
      if (snap.exists) versions.set(snap.ref.path, snap.updateTime!);
    }
  }
  return versions;
}

/** The app's documents that are gone or were written since they were seeded (empty: nothing changed). */
export async function changedAppDocuments(db: Firestore, data: AppData): Promise<string[]> {
  const now = await versionsOf(db, data.refs);
  return data.refs
    .map((ref) => ref.path)
    .filter((path) => {
      const before = data.versions.get(path);
      const after = now.get(path);
      return before === undefined || after === undefined || !before.isEqual(after);
    });
}
