// What one document of the firestore-counter extension's layout holds for one counted field, and how that
// amount leaves it. The extension writes two kinds of documents under `<document>/_counter_shards_/`:
// - a client's shard (`{uuid}`): each device adds to its own with set({stats: {visits: increment(n)}},
//   {merge: true}), so the amount is the number at the field's path;
// - a worker's partial (an id beginning with one to four tabs): a list `_updates_` of
//   `{_id_, _data_}`, each `_data_` holding numbers at the fields' paths (the worker adds entries with
//   arrayUnion and subtracts by adding negative ones), so the amount is the sum over the entries.
// The extension's value of a counter is the field on the document plus these amounts over every document
// of the subcollection. Pure, no Firebase import: unit tests pin every shape. Reading a field's value is
// model/extension-data.ts's (the creations of counters read the app's document with it too).
import { fieldSegments, integerAmount, isMap, valueAt, type Data } from "../model/extension-data";

/** How an amount leaves its document: the whole document, one field path (the highest map it empties), or the partial's new list. */
export type Removal = { op: "delete" } | { op: "deleteField"; path: string[] } | { op: "setUpdates"; updates: unknown[] };

export type ShardAmount =
  /** The field is not in this document: nothing of this counter is in it. */
  | { kind: "absent" }
  | { kind: "amount"; amount: number; partial: boolean; removal: Removal }
  /** Something at the field that is not an integer amount: left where it is, and reported. */
  | { kind: "bad"; reason: string };

/** The extension's partials have ids beginning with a tab (one to four of them: its planner pads to five characters). */
export function isPartialId(id: string): boolean {
  return id.startsWith("\t");
}

/** `data` without the value at `path`, as a copy; the maps on the path keep their other keys. */
function without(data: Data, path: readonly string[]): Data {
  const [head, ...rest] = path as [string, ...string[]];
  const copy: Data = { ...data };
  if (rest.length === 0) delete copy[head];
  else copy[head] = without(copy[head] as Data, rest);
  return copy;
}

/**
 * The highest map on `path` left with no key once the value at `path` is gone (the value's own path when
 * its map keeps other keys): deleting that one field path removes the amount and the maps that only held
 * it, and nothing else. `[]` when the whole document is left with no field.
 */
function emptiedPath(data: Data, path: readonly string[]): string[] {
  const remaining = without(data, path);
  let emptied = [...path];
  for (let i = 1; i < path.length; i++) {
    const map = valueAt(remaining, path.slice(0, i));
    if (isMap(map) && Object.keys(map).length === 0) {
      emptied = path.slice(0, i);
      break;
    }
  }
  // The top-level field that goes was the document's only one: the document goes.
  return emptied.length === 1 && Object.keys(data).length === 1 ? [] : emptied;
}

/** The amount a client's shard or a worker's partial holds for `field`, and how it leaves the document. */
export function shardAmount(id: string, data: Data, field: string): ShardAmount {
  const path = fieldSegments(field);
  if (isPartialId(id)) return partialAmount(data, path, field);
  const value = valueAt(data, path);
  if (value === undefined) return { kind: "absent" };
  const amount = integerAmount(value, field);
  if (typeof amount === "string") return { kind: "bad", reason: amount };
  const emptied = emptiedPath(data, path);
  return { kind: "amount", amount, partial: false, removal: emptied.length === 0 ? { op: "delete" } : { op: "deleteField", path: emptied } };
}

function partialAmount(data: Data, path: string[], field: string): ShardAmount {
  const updates = data._updates_;
  if (updates === undefined) return { kind: "absent" };
  if (!Array.isArray(updates)) return { kind: "bad", reason: "_updates_ is not a list" };
  let amount = 0;
  let found = false;
  const kept: unknown[] = [];
  for (const entry of updates) {
    const entryData = isMap(entry) ? entry._data_ : undefined;
    const value = isMap(entryData) ? valueAt(entryData, path) : undefined;
    if (value === undefined) {
      kept.push(entry);
      continue;
    }
    const n = integerAmount(value, `an _updates_ entry's ${field}`);
    if (typeof n === "string") return { kind: "bad", reason: n };
    amount += n;
    if (!Number.isSafeInteger(amount)) return { kind: "bad", reason: `the _updates_ entries' ${field} add up beyond 2^53 - 1` };
    found = true;
    // The entry keeps its other fields' amounts (a partial aggregates every field of its shards).
    const emptied = emptiedPath(entryData as Data, path);
    if (emptied.length > 0) kept.push({ ...(entry as Data), _data_: without(entryData as Data, emptied) });
  }
  if (!found) return { kind: "absent" };
  const others = Object.keys(data).filter((key) => key !== "_updates_");
  const removal: Removal = kept.length === 0 && others.length === 0 ? { op: "delete" } : { op: "setUpdates", updates: kept };
  return { kind: "amount", amount, partial: true, removal };
}
