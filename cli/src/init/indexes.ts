// The app's index file with what the counters need (the shipped firestore.indexes.json): every composite
// index and field override of ours that the app's file lacks is appended, and everything of the app's
// stays. An override of the app's on the same collection group and field as one of ours, but different,
// is refused: merging it either way would change what the app or the counters rely on.
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
  let theirs: IndexFile;
  try {
    theirs = JSON.parse(source) as IndexFile;
  } catch (error) {
    refuse(`${file} is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof theirs !== "object" || theirs === null || Array.isArray(theirs)) refuse(`${file} does not hold a JSON object`);
  const merged: IndexFile = { ...theirs };
  const indexes = [...(theirs.indexes ?? [])];
  const newIndexes = (ours.indexes ?? []).filter((index) => !indexes.some((existing) => same(existing, index)));
  const overrides = [...(theirs.fieldOverrides ?? [])];
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
  if (newIndexes.length === 0 && newOverrides.length === 0) return { text: source, addedIndexes: 0, addedOverrides: 0 };
  merged.indexes = [...indexes, ...newIndexes];
  merged.fieldOverrides = [...overrides, ...newOverrides];
  return { text: `${JSON.stringify(merged, null, 2)}\n`, addedIndexes: newIndexes.length, addedOverrides: newOverrides.length };
}
