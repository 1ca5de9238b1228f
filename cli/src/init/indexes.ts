// The app's index file with what the counters need (the shipped firestore.indexes.json): every composite
// index and field override of ours that the app's file lacks is appended, and everything of the app's
// stays, byte for byte: its comments (a stock `firebase init` writes some), formatting and order. The file
// is read as firebase-tools reads it (lib/jsonc.ts), and one it would refuse is refused naming the line.
// An override of the app's on the same collection group and field as one of ours, but different, is
// refused: merging it either way would change what the app or the counters rely on.
import { appendToTopLevelArrays, readJsonc } from "../lib/jsonc";
import { shippedFile } from "../lib/package";
import { refuse } from "./firebase-json";

interface FieldOverride {
  collectionGroup?: string;
  fieldPath?: string;
  [key: string]: unknown;
}

interface IndexFile {
  indexes?: unknown[];
  fieldOverrides?: FieldOverride[];
  [key: string]: unknown;
}

export interface IndexesChange {
  text: string;
  addedIndexes: number;
  addedOverrides: number;
}

/** JSON equality of two values, whatever their keys' order. */
function same(a: unknown, b: unknown): boolean {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : typeof value === "object" && value !== null
        ? Object.fromEntries(Object.entries(value).sort(([x], [y]) => x.localeCompare(y)).map(([k, v]) => [k, canonical(v)]))
        : value;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** The app's index file (`source`, or none) with ours merged in; `file` names it in a refusal. */
export function mergeIndexes(source: string | undefined, file: string): IndexesChange {
  const ours = JSON.parse(shippedFile("firestore.indexes.json")) as IndexFile;
  if (source === undefined || source.trim() === "") {
    return { text: shippedFile("firestore.indexes.json"), addedIndexes: ours.indexes?.length ?? 0, addedOverrides: ours.fieldOverrides?.length ?? 0 };
  }
  const read = readJsonc(source);
  if (!("value" in read)) {
    refuse(`${file} line ${read.line}, column ${read.column}: ${read.error} (firebase-tools reads it as JSON with comments, and a deploy would stop there too): fix it, then run init again`);
  }
  const theirs = read.value as IndexFile;
  if (typeof theirs !== "object" || theirs === null || Array.isArray(theirs)) refuse(`${file} does not hold a JSON object`);
  for (const key of ["indexes", "fieldOverrides"] as const) {
    if (theirs[key] !== undefined && !Array.isArray(theirs[key])) refuse(`${file}: "${key}" is not a list`);
  }
  const indexes = theirs.indexes ?? [];
  const newIndexes = (ours.indexes ?? []).filter((index) => !indexes.some((existing) => same(existing, index)));
  const overrides = theirs.fieldOverrides ?? [];
  const newOverrides: FieldOverride[] = [];
  for (const override of ours.fieldOverrides ?? []) {
    const existing = overrides.find((o) => o.collectionGroup === override.collectionGroup && o.fieldPath === override.fieldPath);
    if (existing === undefined) newOverrides.push(override);
    else if (!same(existing, override)) {
      refuse(
        `${file} already has a field override on ${override.collectionGroup}.${override.fieldPath} that differs from the counters' ` +
          `(${JSON.stringify(override)}): make it the counters' or remove it, then run init again`,
      );
    }
  }
  const text = appendToTopLevelArrays(source, [
    ["indexes", newIndexes],
    ["fieldOverrides", newOverrides],
  ]);
  return { text, addedIndexes: newIndexes.length, addedOverrides: newOverrides.length };
}
