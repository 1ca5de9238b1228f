// What `firestore-exact-counter init` would change in a project folder, worked out completely before
// anything is written: every file's new content, or a refusal naming its cause. The cheap checks come
// first (firebase.json, the codebase folder, the files to merge), then the two that run code: the app's
// other codebases loaded for their function names, and the merged rules evaluated in a Firestore
// emulator against the counters' guarantees (check-rules).
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { checkFunctionNames } from "./names";
import { codebaseEntry, codebaseEnv, codebaseEnvLocal, codebaseGitignore, codebasePackageJson, folderState, LOCAL_ROLLUP_INTERVAL_MS, type CodebaseSpecs } from "./codebase";
import { copied, replacedTarballs, type TarballCopy } from "./tarballs";
import { firebaseJsonText, mergeFirebaseJson, refuse, wouldDownloadEmulatorUi } from "./firebase-json";
import { mergeIndexes } from "./indexes";
import { mergeRules } from "./rules";
import { CLI_PACKAGE, FUNCTIONS_PACKAGE } from "../lib/package";
import { firebasercProject, readFirebaseJson, type CodebaseEntry } from "../lib/project";
import { checkGuarantees } from "../lib/rules-check";
import { CALLERS } from "../lib/rules-guarantees";
import { withFirestoreEmulator } from "../lib/firestore-emulator";
import { errorMessage, firebaseToolsRoot } from "../lib/firebase-tools-internals";

export interface InitOptions {
  /** The project folder (holds firebase.json). */
  dir: string;
  /** The codebase's name and folder. */
  codebase: string;
  /** Package specs as package.json names them (tarballs.ts: a version, a range, file:./x.tgz). */
  specs: CodebaseSpecs;
  /** The tarballs the specs name that init copies into the codebase folder. */
  tarballs?: TarballCopy[];
}

/** A tarball init copies into the codebase folder (or finds there already, byte for byte). */
export interface PlannedCopy extends TarballCopy {
  /** Relative to the project folder. */
  path: string;
  changed: boolean;
}

export interface FileChange {
  /** Relative to the project folder. */
  path: string;
  /** The content now (undefined: the file does not exist). */
  before: string | undefined;
  after: string;
  /** What changes, for the user. */
  what: string;
}

export interface Plan {
  dir: string;
  codebase: string;
  /** Every file init writes, changed or not (unchanged ones have before === after). */
  files: FileChange[];
  /** The tarballs package.json names, copied into the codebase folder. */
  copies: PlannedCopy[];
  /** Tarballs of the codebase folder that package.json named before and names no more (relative to the project folder). */
  removals: string[];
  /** What the user should know (nothing refused, nothing blocked). */
  warnings: string[];
  /** The app's rules file (as firebase.json names it), and the result of its check, for the summary. */
  rulesPath: string;
  rulesSummary: string;
  /** The result of the function-name comparison, for the summary. */
  namesSummary: string;
  /** Whether the codebase's dependencies are installed already (npm install can be skipped when nothing changed). */
  installed: boolean;
}

function read(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}

/**
 * Every file's new content and the warnings, from the files alone: no code is run, nothing is checked
 * beyond what the files say (the tests' quick way to an app with the counters added).
 */
export function planFiles(options: InitOptions): Plan & { others: CodebaseEntry[] } {
  const { dir, codebase, specs } = options;
  const firebaseJsonPath = join(dir, "firebase.json");
  if (!existsSync(firebaseJsonPath)) refuse(`${dir} has no firebase.json: run init in your Firebase project folder (firebase init makes one), or name it with --dir`);
  const originalJson = readFileSync(firebaseJsonPath, "utf8");
  const firebaseJson = readFirebaseJson(dir);

  const codebaseDir = join(dir, codebase);
  if (folderState(codebaseDir) === "not ours") {
    refuse(`${codebase}/ exists and is not a firestore-exact-counter codebase (no package.json depending on @firestore-exact-counter/functions): choose another folder with --codebase <name>`);
  }
  const merged = mergeFirebaseJson(firebaseJson, codebase);
  const warnings: string[] = [];
  if (wouldDownloadEmulatorUi(merged.json)) {
    warnings.push(
      `firebase.json: firebase emulators:start would start the Emulator UI, which firebase-tools downloads at first use (it fails offline); add "ui": { "enabled": false } to its "emulators" section if this machine cannot download it`,
    );
  }
  const rulesPath = merged.firestore.rules;
  const rulesBefore = read(join(dir, rulesPath));
  const indexesPath = merged.firestore.indexes;
  const indexes = mergeIndexes(read(join(dir, indexesPath)), indexesPath);

  const files: FileChange[] = [];
  const add = (path: string, after: string, what: string) => files.push({ path, before: read(join(dir, path)), after, what });
  add(`${codebase}/package.json`, codebasePackageJson(read(join(codebaseDir, "package.json")), codebase, specs), `depends on ${FUNCTIONS_PACKAGE} (${specs.functions}), firebase-functions and firebase-admin; ${CLI_PACKAGE} for the predeploy preflight`);
  add(`${codebase}/index.js`, read(join(codebaseDir, "index.js")) ?? codebaseEntry(codebase), `re-exports ${FUNCTIONS_PACKAGE}`);
  add(`${codebase}/.env`, codebaseEnv(read(join(codebaseDir, ".env")), codebase), "every param with its default and what it does");
  add(
    `${codebase}/.env.local`,
    read(join(codebaseDir, ".env.local")) ?? codebaseEnvLocal(codebase),
    `ROLLUP_INTERVAL_MS=${LOCAL_ROLLUP_INTERVAL_MS} for the emulator only (it delivers trigger events one at a time: a local burst settles within seconds)`,
  );
  add(`${codebase}/.gitignore`, codebaseGitignore(read(join(codebaseDir, ".gitignore"))), "node_modules/ and .env.local");
  const codebaseWhat = merged.addedCodebase ? `functions codebase "${codebase}" (source ${codebase}/, the preflight as its predeploy)` : `codebase "${codebase}" kept as it is`;
  const firestoreWhat = [
    ...(merged.firestore.added ? [`firestore names ${rulesPath} and ${indexesPath}`] : []),
    ...(merged.firestore.addedPredeploy ? ["the rules check (preflight --rules) as the firestore predeploy"] : []),
  ];
  add("firebase.json", firebaseJsonText(originalJson, merged), [codebaseWhat, ...firestoreWhat].join("; "));
  add(rulesPath, mergeRules(rulesBefore, rulesPath), rulesBefore === undefined ? "the counters' rules" : "the counters' block inside match /databases/{database}/documents, every line of yours kept");
  add(indexesPath, indexes.text, `${indexes.addedIndexes} composite index(es) and ${indexes.addedOverrides} field override(s) of the counters' (the TTL policy of their idempotency records among them)`);
  const copies = plannedCopies(codebase, codebaseDir, options.tarballs ?? []);
  const removals = replacedTarballs(read(join(codebaseDir, "package.json")), [FUNCTIONS_PACKAGE, CLI_PACKAGE], [specs.functions, specs.cli], codebaseDir).map((name) => `${codebase}/${name}`);
  const installed = existsSync(join(codebaseDir, "node_modules", ...FUNCTIONS_PACKAGE.split("/"), "package.json"));
  // firebase-tools runs the predeploy steps of every entry without a codebase name on a deploy of ours too
  // (getReleventConfigs in its deploy/lifecycleHooks.js): worth knowing, never changed for the app.
  for (const entry of merged.others.filter((e) => e.codebase === undefined && e.predeploy !== undefined)) {
    warnings.push(
      `firebase.json's codebase "default" (${entry.source ?? "remote"}) names no "codebase", so firebase deploy --only functions:${codebase} runs its predeploy steps too; add "codebase": "default" to it to avoid that`,
    );
  }
  return { dir, codebase, files, copies, removals, warnings, rulesPath, rulesSummary: "", namesSummary: "", installed, others: merged.others };
}

/** The copies into the codebase folder; two tarballs of the same name are refused (one would replace the other). */
function plannedCopies(codebase: string, codebaseDir: string, tarballs: readonly TarballCopy[]): PlannedCopy[] {
  const copies: PlannedCopy[] = [];
  for (const tarball of tarballs) {
    const same = copies.find((c) => c.name === tarball.name);
    if (same !== undefined && same.source !== tarball.source) {
      refuse(`${same.source} and ${tarball.source} have the same name, and init copies both into ${codebase}/: rename one`);
    }
    if (same === undefined) copies.push({ ...tarball, path: `${codebase}/${tarball.name}`, changed: !copied(codebaseDir, tarball) });
  }
  return copies;
}

/** planFiles, then the checks that run code: the app's codebases' function names, and the merged rules in an emulator. */
export async function planInit(options: InitOptions): Promise<Plan> {
  const { others, ...plan } = planFiles(options);
  const { dir } = options;
  firebaseToolsRoot(); // the checks below run the app's firebase-tools: without it, say what to install first
  const projectId = firebasercProject(dir) ?? "demo-firestore-exact-counter-init";
  const names = await checkFunctionNames({ projectId, projectDir: dir, firebaseConfig: { projectId, databaseURL: "", storageBucket: `${projectId}.appspot.com` } }, others);
  if (names.clashes.length > 0) {
    refuse(`${names.clashes.join("; ")}: function names are per project and these are the counters'; rename yours first (a deploy that loads both codebases fails)`);
  }
  plan.namesSummary =
    names.compared.length === 0 ? "function names: no other codebase to compare with" : `function names: none in common with codebase ${names.compared.join(", ")}`;
  for (const unreadable of names.unreadable) {
    plan.warnings.push(`could not load ${unreadable}; so its function names were not compared with ours (install and build it, then run init again: firestore-exact-counter preflight compares them before every deploy too)`);
  }
  const rules = plan.files.find((f) => f.path === plan.rulesPath)!;
  plan.rulesSummary = await checkMergedRules(rules.after, rules.path);
  return plan;
}

/** check-rules on the merged rules: a refusal naming every broken guarantee; else the summary line. */
async function checkMergedRules(rules: string, file: string): Promise<string> {
  let results;
  try {
    results = await withFirestoreEmulator((host) => checkGuarantees(rules, host));
  } catch (error) {
    const message = errorMessage(error).replace(/\s*\n\s*/g, " ");
    if (/compil/i.test(message)) refuse(`${file} with the counters' block does not compile: ${message}`);
    throw error;
  }
  const broken = results.flatMap((r) => r.breaches);
  if (broken.length > 0) {
    refuse(
      `${file} would let clients write or read what the counters keep to themselves, even with the counters' block (rules are OR'ed): ${broken.join("; ")}. ` +
        `Leave the counters out of the rule that opens them (docs/existing-app.md, "Rules"), then run init again`,
    );
  }
  return `check-rules: all ${results.length} guarantees hold for ${Object.values(CALLERS).map((c) => c.label).join(", ")}`;
}

/** The files init changes (or creates), with the project-relative path. */
export function changed(plan: Plan): FileChange[] {
  return plan.files.filter((f) => f.before !== f.after);
}

/** Whether the plan changes anything: a file, a tarball copied, or one removed. */
export function changesAnything(plan: Plan): boolean {
  return changed(plan).length > 0 || plan.copies.some((c) => c.changed) || plan.removals.length > 0;
}

/** A path relative to the project folder, for messages. */
export function shown(plan: Plan, path: string): string {
  return relative(plan.dir, join(plan.dir, path)) || ".";
}
