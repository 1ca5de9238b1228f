// The index file: valid for firebase-tools, with the TTL policy that expires the idempotency records (and,
// with DOCUMENT_COUNTERS, the document records and deletion times), the indexes the sweep's two queries
// need (the promises' due times, and the previous version's leases), the shards' index the rollup sums
// through and the index the midnight commit's query needs, and without the TTL policy of earlier versions.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { COUNTERS, DELETED, DOCUMENT_RECORDS, REQUESTS, ROLLUP, SHARD_SUMS_INDEX, TRAILING_DUE_AT, WINDOWS_MOVE_AT } from "../../../functions/src/model/paths";
import { errorMessage, firestoreApi } from "../lib/firebase-tools-internals";
import { readJsonc } from "../lib/jsonc";
import { firestoreConfig, userEnvs } from "./context";
import { SWEEP, WINDOWS } from "./manifest";
import type { CheckResult, Context } from "./types";

/** The idempotency records' collection id before it became the backend's own (functions/src/model/paths.ts). */
const LEGACY_REQUESTS = "requests";

interface IndexSpec {
  indexes?: { collectionGroup?: string; queryScope?: string; fields?: { fieldPath?: string; order?: string }[] }[];
  fieldOverrides?: { collectionGroup?: string; fieldPath?: string; ttl?: boolean; indexes?: { order?: string; queryScope?: string }[] }[];
}

export function checkIndexes(ctx: Context): CheckResult {
  const check = "indexes";
  try {
    const file = firestoreConfig(ctx).indexes;
    if (file === undefined) throw new Error("firebase.json names no firestore.indexes file");
    // As a deploy reads it: JSON with comments (a stock `firebase init` writes some).
    const read = readJsonc(readFileSync(join(ctx.options.projectDir, file), "utf8"));
    if (!("value" in read)) return { check, status: "fail", message: `${file} line ${read.line}, column ${read.column}: ${read.error} (a deploy would stop there too)` };
    const spec = read.value as IndexSpec;
    new firestoreApi.FirestoreApi().validateSpec(spec);
    const ttl = spec.fieldOverrides?.some((o) => o.collectionGroup === REQUESTS && o.fieldPath === "expireAt" && o.ttl === true);
    if (!ttl) {
      return { check, status: "fail", message: `${file} has no TTL override on ${REQUESTS}.expireAt: idempotency records would never expire` };
    }
    const sweepIndex = spec.fieldOverrides?.some(
      (o) =>
        o.collectionGroup === ROLLUP &&
        o.fieldPath === "dueAt" &&
        (o.indexes ?? []).some((i) => i.order === "ASCENDING" && i.queryScope === "COLLECTION_GROUP"),
    );
    if (!sweepIndex) {
      return {
        check,
        status: "fail",
        message: `${file} has no collection-group index on ${ROLLUP}.dueAt: ${SWEEP}'s query would fail, and claims the previous version left at the upgrade would never be finished`,
      };
    }
    const sumsIndex = spec.indexes?.some(
      (i) =>
        i.collectionGroup === SHARD_SUMS_INDEX.collectionGroup &&
        i.queryScope === SHARD_SUMS_INDEX.queryScope &&
        JSON.stringify(i.fields) === JSON.stringify(SHARD_SUMS_INDEX.fields),
    );
    if (!sumsIndex) {
      return {
        check,
        status: "fail",
        message: `${file} has no index on ${SHARD_SUMS_INDEX.collectionGroup} (count, writes): the rollup would sum counts alone and no counter would grow (docs/growth.md)`,
      };
    }
    // `rollup` is exempt from indexing on counters; the one field of it the midnight commit queries is
    // indexed again by its own override. Without it the query fails and windows never move at midnight.
    const movesIndex = spec.fieldOverrides?.some(
      (o) =>
        o.collectionGroup === COUNTERS &&
        o.fieldPath === WINDOWS_MOVE_AT &&
        (o.indexes ?? []).some((i) => i.order === "ASCENDING" && i.queryScope === "COLLECTION"),
    );
    if (!movesIndex) {
      return {
        check,
        status: "fail",
        message: `${file} has no index on ${COUNTERS}.${WINDOWS_MOVE_AT}: ${WINDOWS}' query would fail, and windowed counters' windows would never move at midnight (docs/windows.md)`,
      };
    }
    // The sweep's query of promises: `rollup.trailing.dueAt`, indexed again as `rollup.windowsMoveAt` is.
    const promisesIndex = spec.fieldOverrides?.some(
      (o) =>
        o.collectionGroup === COUNTERS &&
        o.fieldPath === TRAILING_DUE_AT &&
        (o.indexes ?? []).some((i) => i.order === "ASCENDING" && i.queryScope === "COLLECTION"),
    );
    if (!promisesIndex) {
      return {
        check,
        status: "fail",
        message: `${file} has no index on ${COUNTERS}.${TRAILING_DUE_AT}: ${SWEEP}'s query would fail, and a promise whose owner's retries ran out would never be fulfilled (docs/rollup.md)`,
      };
    }
    // DOCUMENT_COUNTERS: what a deleted document leaves behind (its record, a deleted counter's time) expires.
    const envs = userEnvs(ctx, check);
    const documents = "values" in envs && (envs.values.DOCUMENT_COUNTERS ?? "").trim() !== "";
    const expiring = (group: string) => spec.fieldOverrides?.some((o) => o.collectionGroup === group && o.fieldPath === "expireAt" && o.ttl === true);
    const unexpired = [DOCUMENT_RECORDS, DELETED].filter((group) => !expiring(group));
    if (documents && unexpired.length > 0) {
      return {
        check,
        status: "fail",
        message: `${file} has no TTL override on ${unexpired.map((g) => `${g}.expireAt`).join(" and ")}: with DOCUMENT_COUNTERS set, what deleted documents leave behind would never expire (docs/documents.md; firestore-exact-counter init adds it)`,
      };
    }
    // The TTL policy of earlier versions, on the group `requests`: it deletes every document with a past
    // `expireAt` in any collection named requests, an app's own too (docs/deploying.md, upgrading).
    if (spec.fieldOverrides?.some((o) => o.collectionGroup === LEGACY_REQUESTS && o.ttl === true)) {
      return {
        check,
        status: "warn",
        message:
          `${file} still has the TTL override on ${LEGACY_REQUESTS}.expireAt of earlier versions: it deletes documents with a past expireAt in ` +
          `every collection named ${LEGACY_REQUESTS}, your app's too; remove it once the old idempotency records have expired (docs/deploying.md, "Upgrading")`,
      };
    }
    return {
      check,
      status: "ok",
      message: `${file} is valid, with the TTL policy on ${REQUESTS}.expireAt, ${SWEEP}'s index on ${ROLLUP}.dueAt, the shards' index on (count, writes) and ${WINDOWS}' index on ${COUNTERS}.${WINDOWS_MOVE_AT}`,
    };
  } catch (error) {
    return { check, status: "fail", message: `firestore indexes: ${errorMessage(error)}` };
  }
}
