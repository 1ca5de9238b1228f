// The params' table (model/params.ts) held to what firebase-tools reads, the declarations config/params.ts
// makes from it; and params.env, the package's list of every param with its default (what an app appends to
// the .env of a codebase that re-exports the functions, and what firestore-exact-counter init writes), and
// this repository's functions/.env, both held to the table: a param added, renamed or given another default
// fails here until both files follow.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { declaredParams } from "firebase-functions/params";
import * as params from "../src/config/params";
import { paramList, paramsEnv } from "../src/model/params";

const FUNCTIONS_DIR = join(__dirname, "..");

/** The NAME of every NAME=value line of an env file, in order (comments and blank lines skipped). */
function names(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.trimStart().startsWith("#"))
    .map((line) => /^([A-Z0-9_]+)=/.exec(line)?.[1] ?? `not a NAME=value line: ${line}`);
}

interface Declared {
  name: string;
  options?: { default?: unknown; description?: string };
  constructor: { type?: string };
}

describe("the params' table", () => {
  it("is exactly what config/params.ts declares to firebase-functions: the same params in the same order, kinds, defaults and descriptions", () => {
    const ours = new Set(Object.values(params.DECLARED as Record<string, Declared>).map((p) => p.name));
    const declared = (declaredParams as unknown as Declared[]).filter((p) => ours.has(p.name));
    expect(declared.map((p) => ({ name: p.name, type: p.constructor.type, default: String(p.options?.default), description: p.options?.description }))).toEqual(paramList());
  });
});

describe("params.env", () => {
  it("is every param of the table with its default, one NAME=value line each, in their order", () => {
    expect(readFileSync(join(FUNCTIONS_DIR, "params.env"), "utf8")).toBe(paramsEnv());
  });

  it("gives every param a value: each one has a default, so neither the emulator nor a deploy prompts", () => {
    expect(paramList().filter((p) => p.default === undefined).map((p) => p.name)).toEqual([]);
  });

  it("describes every param (firestore-exact-counter init writes the description above its line)", () => {
    expect(paramList().filter((p) => p.description.trim() === "").map((p) => p.name)).toEqual([]);
  });

  it("lists each param once, with a name firebase-tools accepts", () => {
    const listed = paramList().map((p) => p.name);
    expect(new Set(listed).size).toBe(listed.length);
    for (const name of listed) expect(name).toMatch(/^[A-Z][A-Z0-9_]*$/);
    expect(listed.length).toBeGreaterThanOrEqual(24);
  });
});

describe("functions/.env (this repository's own values)", () => {
  it("has a line for every param and none for a param that does not exist", () => {
    const lines = names(readFileSync(join(FUNCTIONS_DIR, ".env"), "utf8"));
    expect([...lines].sort()).toEqual(paramList().map((p) => p.name).sort());
  });
});
