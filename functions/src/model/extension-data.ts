// What the firestore-counter extension's documents hold at a counted field: the value at a dotted field
// path (`stats.visits` → stats, visits, as the extension's clients split it), as an integer amount or why
// not. Read by the fold (extension/amounts.ts, fold.ts) and by the creation of a counter that takes over
// an app document's field (counters/extension-take.ts). Pure, no Firebase import.

/** A document's data as the admin SDK reads it. */
export type Data = Record<string, unknown>;

/** A dotted field path's segments, as the extension's clients split it: `stats.visits` → stats, visits. */
export function fieldSegments(field: string): string[] {
  return field.split(".");
}

/** A plain map of a document's data (not a list, a Timestamp or another class). */
export function isMap(value: unknown): value is Data {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The value at `path` in nested maps, or undefined when some part of the path is missing or not a map. */
export function valueAt(data: Data | undefined, path: readonly string[]): unknown {
  let here: unknown = data;
  for (const segment of path) {
    if (!isMap(here) || !Object.prototype.hasOwnProperty.call(here, segment)) return undefined;
    here = here[segment];
  }
  return here;
}

/** An amount as the extension's data holds it: a safe integer, or why it is not one. */
export function integerAmount(value: unknown, where: string): number | string {
  if (typeof value === "number" && Number.isSafeInteger(value)) return value;
  if (typeof value === "number") return `${where} holds ${String(value)}, not an integer a counter can hold`;
  return `${where} holds a ${value === null ? "null" : Array.isArray(value) ? "list" : typeof value === "object" ? "map" : typeof value}, not a number`;
}

/** The counted field's value on the app's document: 0 when absent (or no document), else an integer or why not. */
export function fieldAmount(data: Data | undefined, field: string): number | string {
  const value = valueAt(data, fieldSegments(field));
  return value === undefined ? 0 : integerAmount(value, field);
}
