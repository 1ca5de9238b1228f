// Which functions a codebase deploys, EXTENSION_COUNTERS, LEADERBOARDS and DOCUMENT_COUNTERS set or not
// (docs/from-the-extension.md, docs/leaderboards.md, docs/documents.md): the functions' entry deploys exactly
// the contract's ten, foldExtensionShards too while the param names extension counters (rollupBoard while
// LEADERBOARDS names boards), whether a codebase re-exports it with
// TypeScript's `export *` (CommonJS output) or CommonJS's Object.assign; a native ES module's `export *`
// gets exactly the ten, and the fold trigger by the one line docs/from-the-extension.md gives it. The
// document triggers are one group, `documentCounters`, that every one-line re-export carries alike: empty
// (nothing more deployed) while DOCUMENT_COUNTERS is, `documentCounters-<name>` per pattern once it names some. Each is loaded in a child process by
// firebase-functions' own loader (what firebase-tools' discovery runs), with the param in the environment
// (run time), or only in the codebase's .env files while discovery runs (FUNCTIONS_CONTROL_API, the
// codebase's folder as working directory: how firebase-tools 14 loads the code for a deploy).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { REPO_ROOT } from "../lib/firebase-cli";
import { runNode } from "../../test/helpers/run";
import { parseDocumentCounterRules } from "../../functions/src/model/document-rules";
import { DOCUMENT_TRIGGER_GROUP, documentTriggers } from "../../functions/src/model/document-triggers";
import { requireBuiltFunctions } from "../../test/helpers/emulators";

// These tests read the built functions (functions/lib), as a deploy does.
beforeAll(requireBuiltFunctions);

const CACHE = join(REPO_ROOT, ".cache", "extension-exports");
const ENTRY = join(REPO_ROOT, "functions", "lib", "index.js");
const CONTRACT = ["createCounter", "incrementCounter", "setMember", "resetCounter", "reshardCounter", "deleteCounter", "rollupTotal", "rollupSweep", "rollupWindows", "cleanupDeletedCounter"];
const RULE = "pages/{id}:visits=page-{id}-visits";
const BOARDS = "points=user-{uid}-points";
const DOCUMENT_RULES = "posts/{post}/comments/{comment}=post-{post}-comments,posts/{p}/comments/{c}[status==published]=post-{p}-published,users/{uid}=users-count";
/** The ids the document triggers deploy under: one per distinct pattern (two here). */
const DOCUMENT_TRIGGERS = documentTriggers(parseDocumentCounterRules("DOCUMENT_COUNTERS", DOCUMENT_RULES)).map((t) => t.id);

jest.setTimeout(120_000);

afterAll(() => rmSync(CACHE, { recursive: true, force: true }));

/** The lines a native ES module app adds to deploy the fold trigger (docs/from-the-extension.md) and the board's (docs/leaderboards.md) too. */
const ESM_FOLD_LINE = (entry: string) =>
  `import counters from ${JSON.stringify(entry)};\nexport const foldExtensionShards = counters.foldExtensionShards;\nexport const rollupBoard = counters.rollupBoard;\n`;

/** An app's codebase folder whose entry re-exports the functions in one of the three ways (esm: with the fold's line). */
function codebase(kind: "typescript" | "esm" | "commonjs", env: string): string {
  mkdirSync(CACHE, { recursive: true });
  const dir = mkdtempSync(join(CACHE, `${kind}-`));
  const main = kind === "esm" ? "index.mjs" : "index.js";
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app-counters", private: true, main }));
  writeFileSync(join(dir, ".env"), env);
  if (kind === "typescript") {
    // What tsc makes of the one line docs/existing-app.md gives (module: commonjs).
    const compiled = ts.transpileModule(`export * from ${JSON.stringify(ENTRY)};\n`, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
    writeFileSync(join(dir, main), compiled.outputText);
  } else if (kind === "esm") {
    writeFileSync(join(dir, main), `export * from ${JSON.stringify(ENTRY)};\n${ESM_FOLD_LINE(ENTRY)}`);
  } else {
    writeFileSync(join(dir, main), `Object.assign(exports, require(${JSON.stringify(ENTRY)}));\n`);
  }
  return dir;
}

/** The endpoints firebase-functions' loader finds in `dir`, as discovery does, run with `env`. */
async function endpoints(dir: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  // The SDK's own discovery code (not in its exports map: named by its path in the installed package).
  const loader = join(REPO_ROOT, "node_modules", "firebase-functions", "lib", "runtime", "loader.js");
  const script = `require(${JSON.stringify(loader)}).loadStack(${JSON.stringify(dir)}).then((s) => { console.log(JSON.stringify(Object.keys(s.endpoints))); process.exit(0); }, (e) => { console.error(e); process.exit(1); });`;
  const run = await runNode(["-e", script], { cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME, METADATA_SERVER_DETECTION: "none", ...env } });
  if (run.code !== 0) throw new Error(`loading ${dir} failed: ${run.stderr}`);
  return (JSON.parse(run.stdout.trim().split("\n").at(-1)!) as string[]).sort();
}

const discovery = { FUNCTIONS_CONTROL_API: "true", GCLOUD_PROJECT: "demo-exports" };

describe.each(["typescript", "esm", "commonjs"] as const)("a codebase that re-exports the functions (%s)", (kind) => {
  it("deploys exactly the contract's ten functions with the default params, at run time and at discovery", async () => {
    const dir = codebase(kind, "EXTENSION_COUNTERS=\n");
    expect(await endpoints(dir, {})).toEqual([...CONTRACT].sort());
    expect(await endpoints(dir, discovery)).toEqual([...CONTRACT].sort());
  });

  it("deploys foldExtensionShards too while EXTENSION_COUNTERS names extension counters", async () => {
    expect(await endpoints(codebase(kind, ""), { EXTENSION_COUNTERS: RULE })).toEqual([...CONTRACT, "foldExtensionShards"].sort());
    // Discovery: the value only in the codebase's own .env files, .env.<project> over .env.
    const dir = codebase(kind, "EXTENSION_COUNTERS=\n");
    writeFileSync(join(dir, ".env.demo-exports"), `EXTENSION_COUNTERS=${RULE}\n`);
    expect(await endpoints(dir, discovery)).toEqual([...CONTRACT, "foldExtensionShards"].sort());
    expect(await endpoints(dir, { ...discovery, GCLOUD_PROJECT: "demo-other" })).toEqual([...CONTRACT].sort());
  });

  it("deploys rollupBoard too while LEADERBOARDS names leaderboards", async () => {
    expect(await endpoints(codebase(kind, ""), { LEADERBOARDS: BOARDS })).toEqual([...CONTRACT, "rollupBoard"].sort());
    const dir = codebase(kind, "LEADERBOARDS=\n");
    writeFileSync(join(dir, ".env.demo-exports"), `LEADERBOARDS=${BOARDS}\n`);
    expect(await endpoints(dir, discovery)).toEqual([...CONTRACT, "rollupBoard"].sort());
    expect(await endpoints(dir, { ...discovery, GCLOUD_PROJECT: "demo-other" })).toEqual([...CONTRACT].sort());
  });
});

it("leaves the CommonJS entry's keys at exactly the contract's functions unless the param is set", async () => {
  const keys = async (env: NodeJS.ProcessEnv) => {
    const run = await runNode(["-e", `console.log(JSON.stringify(Object.keys(require(${JSON.stringify(ENTRY)}))))`], { env: { PATH: process.env.PATH, METADATA_SERVER_DETECTION: "none", ...env } });
    return JSON.parse(run.stdout.trim()) as string[];
  };
  expect(await keys({})).toEqual([...CONTRACT, DOCUMENT_TRIGGER_GROUP]);
  expect(await keys({ EXTENSION_COUNTERS: RULE })).toEqual([...CONTRACT, DOCUMENT_TRIGGER_GROUP, "foldExtensionShards"]);
  expect(await keys({ LEADERBOARDS: BOARDS })).toEqual([...CONTRACT, DOCUMENT_TRIGGER_GROUP, "rollupBoard"]);
});

it("gives a native ES module exactly the contract's ten by export *, whatever the param, and the trigger only by its own line", async () => {
  mkdirSync(CACHE, { recursive: true });
  const dir = mkdtempSync(join(CACHE, "esm-plain-"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app-counters", private: true, main: "index.mjs" }));
  writeFileSync(join(dir, "index.mjs"), `export * from ${JSON.stringify(ENTRY)};\n`);
  const names = async (env: NodeJS.ProcessEnv) => {
    const script = `import(${JSON.stringify(join(dir, "index.mjs"))}).then((ns) => console.log(JSON.stringify(Object.keys(ns).filter((k) => k !== "__esModule").sort())))`;
    const run = await runNode(["-e", script], { cwd: dir, env: { PATH: process.env.PATH, METADATA_SERVER_DETECTION: "none", ...env } });
    return JSON.parse(run.stdout.trim()) as string[];
  };
  expect(await names({})).toEqual([...CONTRACT, DOCUMENT_TRIGGER_GROUP].sort());
  expect(await names({ EXTENSION_COUNTERS: RULE })).toEqual([...CONTRACT, DOCUMENT_TRIGGER_GROUP].sort());
  expect(await endpoints(dir, { EXTENSION_COUNTERS: RULE })).toEqual([...CONTRACT].sort());
});

describe.each(["typescript", "esm", "commonjs"] as const)("a codebase that re-exports the functions (%s), with DOCUMENT_COUNTERS", (kind) => {
  it("deploys the document triggers as documentCounters-<name>, one per pattern, at run time and at discovery; nothing more while it is empty", async () => {
    const dir = codebase(kind, "EXTENSION_COUNTERS=\nDOCUMENT_COUNTERS=\n");
    expect(await endpoints(dir, { DOCUMENT_COUNTERS: "" })).toEqual([...CONTRACT].sort());
    expect(await endpoints(dir, { DOCUMENT_COUNTERS: DOCUMENT_RULES })).toEqual([...CONTRACT, ...DOCUMENT_TRIGGERS].sort());
    writeFileSync(join(dir, ".env.demo-exports"), `DOCUMENT_COUNTERS=${DOCUMENT_RULES}\n`);
    expect(await endpoints(dir, discovery)).toEqual([...CONTRACT, ...DOCUMENT_TRIGGERS].sort());
    expect(await endpoints(dir, { ...discovery, GCLOUD_PROJECT: "demo-other" })).toEqual([...CONTRACT].sort());
  });
});
