// The fixture app (test/fixtures/existing-app: its own `default` codebase with a plain-JS callable,
// rules for posts, a composite index) and quick ways to the states the CLI's tests need: a copy, the same
// with the counters added by init's own file planner (no npm install: copies live inside the repository,
// so the codebase resolves @firestore-exact-counter/functions and its peers from the repository's
// node_modules), and rules files made from the app's. The packed test (scripts/test/*.app.test.ts) runs the
// real command, installed from its tarball, on the same fixture.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { writePlan } from "../../cli/src/init/apply";
import { planFiles } from "../../cli/src/init/plan";
import { mergeRules } from "../../cli/src/init/rules";
import { CODEBASE } from "../../cli/src/lib/project";
import { VERSION } from "../../cli/src/lib/package";

export const FIXTURE_APP = join(REPO_ROOT, "test", "fixtures", "existing-app");
export const APP_PROJECT = "demo-existing-app";
/** The codebase folder init makes in the app, next to the app's own functions/. */
export const COUNTERS_SOURCE = CODEBASE;
/** Copies live inside the repository so their functions resolve the repository's node_modules. */
const COPIES = join(REPO_ROOT, ".cache", "existing-app");

/** A fresh copy of the fixture app. */
export function copyOfFixtureApp(): string {
  mkdirSync(COPIES, { recursive: true });
  const dir = mkdtempSync(join(COPIES, "app-"));
  cpSync(FIXTURE_APP, dir, { recursive: true });
  return dir;
}

export function removeCopies(): void {
  rmSync(COPIES, { recursive: true, force: true });
}

/**
 * The files `firestore-exact-counter init` writes, written to `appDir` (what it checks and installs
 * aside), with this repository's functions package as the dependency; and the app's choice of who may
 * create counters: its users create the likes counters of their own posts (CREATE_POLICY=non-anonymous
 * for the app's project, instead of the shipped admin-only default).
 */
export function addCounters(appDir: string): void {
  const { others: _others, ...plan } = planFiles({ dir: appDir, codebase: CODEBASE, specs: { functions: VERSION, cli: VERSION } });
  writePlan(plan);
  writeFileSync(join(appDir, COUNTERS_SOURCE, `.env.${APP_PROJECT}`), "CREATE_POLICY=non-anonymous\n");
}

/** The app's rules with the counters' block added as init adds it. */
export function withOurBlock(appRules: string): string {
  return mergeRules(appRules, "firestore.rules");
}

const DOCUMENTS = /^(\s*)match\s+\/databases\/\{\w+\}\/documents\s*\{\s*$/;

/** Inserts `lines` (re-indented one level deeper) right after the app's `match /databases/{database}/documents {`. */
function insertInDocuments(rules: string, lines: string[]): string {
  const all = rules.split("\n");
  const at = all.findIndex((line) => DOCUMENTS.test(line));
  if (at === -1) throw new Error("no `match /databases/{database}/documents {` line in the app's rules");
  const indent = `${DOCUMENTS.exec(all[at]!)![1]!}  `;
  return [...all.slice(0, at + 1), ...lines.map((line) => indent + line), ...all.slice(at + 1)].join("\n");
}

/** The common mistake that opens everything to signed-in users, rules being OR'ed. */
export function withCatchAll(rules: string): string {
  return insertInDocuments(rules, ["match /{document=**} {", "  allow read, write: if request.auth != null;", "}"]);
}

/** The same catch-all narrowed as docs/existing-app.md shows: everything but the counters. */
export function withNarrowedCatchAll(rules: string): string {
  return insertInDocuments(rules, ["match /{collection}/{document=**} {", '  allow read, write: if request.auth != null && collection != "counters";', "}"]);
}
