// An app of the firestore-counter extension, written into the emulator exactly as the extension writes it
// (in the firebase/extensions repository: firestore-counter:clients/web/src/index.ts and
// firestore-counter:functions/src/worker.ts):
// - an old app version on one device adds to its own shard, a UUID, with
//   `set({stats: {visits: increment(n)}}, {merge: true})`: a dotted field becomes nested maps;
// - the same shard can carry several counted fields of one document in one write (the client's shard());
// - the extension's workers aggregate shards into partials whose ids are the shard id's first one to four
//   characters padded to five with leading tabs, holding `_updates_` entries `{_id_, _data_}` added with
//   arrayUnion (a subtraction is an entry with negative amounts);
// - and they set the counted field on the document itself with merge.
// The admin SDK sends the same writes as the web SDK does (a merge with a field transform), so the stored
// documents are the same. extensionValue reads "the extension's value" independently of the code under test.
import { randomUUID } from "node:crypto";
import { FieldValue, type Firestore, type WriteResult } from "firebase-admin/firestore";
import { rngOf } from "./model/sim";

export const SHARDS = "_counter_shards_";

/** `{stats: {visits: value}}` for `stats.visits`, as the extension's clients build their update. */
export function nested(field: string, value: unknown): Record<string, unknown> {
  return field
    .split(".")
    .reverse()
    .reduce<unknown>((inner, name) => ({ [name]: inner }), value) as Record<string, unknown>;
}

/** One device of an old app version: its shard and its incrementBy. */
export interface OldClient {
  shardId: string;
  incrementBy(n: number): Promise<WriteResult>;
}

export function oldClient(db: Firestore, document: string, field: string, shardId: string = randomUUID()): OldClient {
  return { shardId, incrementBy: (n) => incrementFields(db, document, shardId, { [field]: n }) };
}

/** One write of a client's shard adding to several counted fields of the document (the client's shard() use). */
export function incrementFields(db: Firestore, document: string, shardId: string, amounts: Record<string, number>): Promise<WriteResult> {
  let update: Record<string, unknown> = {};
  for (const [field, n] of Object.entries(amounts)) update = merge(update, nested(field, FieldValue.increment(n)));
  return db.doc(document).collection(SHARDS).doc(shardId).set(update, { merge: true });
}

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const here = out[key];
    const isMap = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && v.constructor === Object;
    out[key] = isMap(here) && isMap(value) ? merge(here, value) : value;
  }
  return out;
}

/** A partial's id as the extension's planner makes it: the prefix, padded to five characters with leading tabs. */
export function partialId(prefix: string): string {
  if (prefix.length < 1 || prefix.length > 4) throw new Error("a partial's prefix has 1 to 4 characters");
  return "\t".repeat(5 - prefix.length) + prefix;
}

/** A worker's partial aggregation: one `_updates_` entry per element (field → amount), appended with arrayUnion. */
export async function workerPartial(db: Firestore, document: string, prefix: string, entries: Record<string, number>[]): Promise<string> {
  const id = partialId(prefix);
  for (const amounts of entries) {
    let data: Record<string, unknown> = {};
    for (const [field, n] of Object.entries(amounts)) data = merge(data, nested(field, n));
    await db
      .doc(document)
      .collection(SHARDS)
      .doc(id)
      .set({ _updates_: FieldValue.arrayUnion({ _id_: randomUUID(), _data_: data }) }, { merge: true });
  }
  return id;
}

/** The counted field as the workers leave it on the document (set with merge: other fields stay). */
export function mainField(db: Firestore, document: string, field: string, value: number): Promise<WriteResult> {
  return db.doc(document).set(nested(field, value), { merge: true });
}

function at(data: unknown, field: string): number {
  let here = data;
  for (const name of field.split(".")) here = typeof here === "object" && here !== null ? (here as Record<string, unknown>)[name] : undefined;
  return typeof here === "number" ? here : 0;
}

/** The extension's value of `field` on `document`: the field, plus every amount in `_counter_shards_` (shards and partials). */
export async function extensionValue(db: Firestore, document: string, field: string): Promise<number> {
  const doc = await db.doc(document).get();
  let value = at(doc.data(), field);
  for (const shard of (await db.doc(document).collection(SHARDS).get()).docs) {
    if (shard.id.startsWith("\t")) {
      for (const entry of (shard.get("_updates_") as { _data_: unknown }[] | undefined) ?? []) value += at(entry._data_, field);
    } else {
      value += at(shard.data(), field);
    }
  }
  return value;
}

/** Every `_counter_shards_` document of `document`, with its data, for "other fields untouched" and "nothing left". */
export async function shardDocuments(db: Firestore, document: string): Promise<Record<string, Record<string, unknown>>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const shard of (await db.doc(document).collection(SHARDS).get()).docs) out[shard.id] = shard.data();
  return out;
}

/** A collection id no other test uses, for a test's extension app documents. */
export function appCollection(prefix = "xpages"): string {
  return `${prefix}${randomUUID().slice(0, 8)}`;
}

/** A seed for a randomized extension test: EXTENSION_TEST_SEED replays one; printed on failure and after a pass. */
export async function withSeed(name: string, body: (random: () => number) => Promise<void>): Promise<void> {
  const fromEnv = process.env.EXTENSION_TEST_SEED;
  const seed = fromEnv !== undefined ? Number(fromEnv) : Math.floor(Math.random() * 2 ** 31);
  try {
    await body(rngOf(seed));
  } catch (error) {
    console.error(`${name} failed with seed ${seed}; re-run with EXTENSION_TEST_SEED=${seed}`);
    throw error;
  }
  console.log(`${name}: seed ${seed}`);
}

/** Shuffles `items` in place with `random` (Fisher-Yates) and returns them. */
export function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
