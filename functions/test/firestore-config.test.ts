// firestore.indexes.json, checked offline with firebase-tools' own deploy-time validator, and against
// what the code needs: the TTL on idempotency records (and document records), `count` left indexed for sum("count"), the index of
// count with writes for the rollup's one aggregation, and the collection-group index on the leases' dueAt
// that the rollup sweep queries.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { BOARDS, DELETED, DOCUMENT_RECORDS, ENTRIES, REQUESTS, ROLLUP, COUNTERS, SHARD_SUMS_INDEX, SHARDS } from "../src/model/paths";

interface FieldOverride {
  collectionGroup: string;
  fieldPath: string;
  ttl?: boolean;
  indexes: unknown[];
}
interface IndexSpec {
  indexes: unknown[];
  fieldOverrides: FieldOverride[];
}

const spec = JSON.parse(readFileSync(join(__dirname, "..", "..", "firestore.indexes.json"), "utf8")) as IndexSpec;
// firebase-tools ships no type declarations; this is the one class we use from it.
const { FirestoreApi } = createRequire(__filename)("firebase-tools/lib/firestore/api") as {
  FirestoreApi: new () => { validateSpec(spec: unknown): void };
};

describe("firestore.indexes.json", () => {
  it("passes firebase-tools' deploy-time validation", () => {
    expect(() => new FirestoreApi().validateSpec(spec)).not.toThrow();
  });

  it("declares the TTL policy on idempotency records' expireAt", () => {
    expect(spec.fieldOverrides).toContainEqual({ collectionGroup: REQUESTS, fieldPath: "expireAt", ttl: true, indexes: [] });
  });

  it("declares the TTL policies on what deleted documents leave behind (DOCUMENT_COUNTERS): records and a deleted counter's time", () => {
    expect(spec.fieldOverrides).toContainEqual({ collectionGroup: DOCUMENT_RECORDS, fieldPath: "expireAt", ttl: true, indexes: [] });
    expect(spec.fieldOverrides).toContainEqual({ collectionGroup: DELETED, fieldPath: "expireAt", ttl: true, indexes: [] });
  });

  it("keeps shard counts indexed and indexes count with writes, which the rollup's one aggregation sums together (and nothing else)", () => {
    // Firestore sums through index scans: sum("count") alone reads the single-field index on count, and
    // sum("count") with sum("writes") in one query reads an index holding both (rollup/sum.ts).
    expect(spec.fieldOverrides.filter((o) => o.collectionGroup === SHARDS)).toEqual([]);
    expect(spec.indexes).toEqual([SHARD_SUMS_INDEX]);
  });

  it("sets no policy and no index on a collection id an app may use: the backend's own ids, and counters (in the contract)", () => {
    // A field override applies to every collection with its id, anywhere in the database. `counters` keeps
    // one exemption, the bookkeeping map `rollup` (written about once a second per busy counter), and no
    // exemption of a field an app's own `…/counters/*` collection is likely to query (createdAt, resetAt).
    // Inside that map two fields are indexed again: `rollup.windowsMoveAt`, which the midnight commit queries
    // (rollup/midnight.ts), and `rollup.trailing.dueAt`, which the sweep queries (rollup/sweep.ts). The shards' day fields keep the automatic indexes their sums read, since an
    // override on `shards` would change an app's own `shards` collections; increments prune old days.
    expect(spec.fieldOverrides.filter((o) => o.collectionGroup === COUNTERS)).toEqual([
      { collectionGroup: COUNTERS, fieldPath: "rollup", indexes: [] },
      { collectionGroup: COUNTERS, fieldPath: "rollup.windowsMoveAt", indexes: [{ order: "ASCENDING", queryScope: "COLLECTION" }] },
      { collectionGroup: COUNTERS, fieldPath: "rollup.trailing.dueAt", indexes: [{ order: "ASCENDING", queryScope: "COLLECTION" }] },
    ]);
    for (const o of spec.fieldOverrides.filter((f) => f.collectionGroup !== COUNTERS)) expect(o.collectionGroup).toMatch(/^exactCounter/);
  });

  it("only exempts fields of collections the code writes", () => {
    for (const o of spec.fieldOverrides) expect([COUNTERS, REQUESTS, ROLLUP, DOCUMENT_RECORDS, DELETED, BOARDS]).toContain(o.collectionGroup);
    const indexed = (f: FieldOverride) =>
      (f.collectionGroup === ROLLUP && f.fieldPath === "dueAt") || (f.collectionGroup === COUNTERS && ["rollup.windowsMoveAt", "rollup.trailing.dueAt"].includes(f.fieldPath));
    for (const o of spec.fieldOverrides.filter((f) => !indexed(f))) {
      expect(o.indexes).toEqual([]);
    }
  });

  it("exempts a leaderboard summary's buckets (rewritten with every summary, read only by the document's id), and nothing else of a board", () => {
    // The sweep's query of the boards' promises (rollup.trailing.dueAt) and the entries' range counts on `total`
    // and latest `changedAt` read the automatic single-field indexes (leaderboard/board-store.ts).
    expect(spec.fieldOverrides.filter((o) => o.collectionGroup === BOARDS || o.collectionGroup === ENTRIES)).toEqual([
      { collectionGroup: BOARDS, fieldPath: "bounds", indexes: [] },
      { collectionGroup: BOARDS, fieldPath: "counts", indexes: [] },
    ]);
  });

  it("indexes what the rollup sweep queries: the promises' due times on counters, and the previous version's leases across counters", () => {
    expect(spec.fieldOverrides).toContainEqual({ collectionGroup: COUNTERS, fieldPath: "rollup.trailing.dueAt", indexes: [{ order: "ASCENDING", queryScope: "COLLECTION" }] });
    // Kept while leases of the previous version may be left (docs/rollup.md, "Upgrading from the lease").
    expect(spec.fieldOverrides).toContainEqual({
      collectionGroup: ROLLUP,
      fieldPath: "dueAt",
      indexes: [{ order: "ASCENDING", queryScope: "COLLECTION_GROUP" }],
    });
  });
});
