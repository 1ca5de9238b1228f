// `firestore-exact-counter check-rules PATH/TO/firestore.rules` (in this repository: npm run check-rules):
// whether a rules file (typically an app's, with the counters' block that init put in) keeps the
// counters' guarantees. Evaluates the file in a Firestore emulator with the table the rules tests use
// (lib/rules-guarantees.ts): one line per guarantee, exit 1 naming each broken one. init runs the same
// check on the rules it writes. And a warning for each field MIRRORS keeps that the rules let a client
// write (lib/rules-mirrors.ts), MIRRORS read from the project folder's counters codebase.
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseMirrorRules, type MirrorRule } from "../../../functions/src/model/mirror-rules";
import { EXIT, lastValue, readArgv, UsageError, type Command } from "../lib/cli";
import { countersSourceDir, firebasercProject, projectDir, runningParams } from "../lib/project";
import { checkMirrorWrites, mirrorWriteLine, type MirrorWrite } from "../lib/rules-mirrors";
import { withFirestoreEmulator } from "../lib/firestore-emulator";
import { shippedFile } from "../lib/package";
import { errorMessage } from "../lib/firebase-tools-internals";
import { blockStatus, type BlockStatus } from "../lib/rules-block";
import { checkGuarantees, type GuaranteeResult } from "../lib/rules-check";
import { ALL_CALLERS, CALLERS, GUARANTEES } from "../lib/rules-guarantees";

const HELP = `Usage: firestore-exact-counter check-rules <path/to/firestore.rules> [--dir <folder>]

Checks whether a Firestore rules file keeps the counters' guarantees, by evaluating it in the Firestore
emulator with real client requests as ${ALL_CALLERS.map((c) => CALLERS[c].label).join(", ")}:
${GUARANTEES.map((g) => `  - ${g.statement}`).join("\n")}
Rules are OR'ed: a rule elsewhere in the file (a catch-all match /{document=**}, a collection-group rule)
can open what the counters' block denies. firestore-exact-counter init puts the block (marked
"BEGIN firestore-exact-counter rules") into an app's rules and runs this check on the result; run it
again after changing your rules.

It also warns of each field that MIRRORS writes (read from the counters codebase of the project folder:
--dir, else the nearest folder above the rules file that holds firebase.json) and that the rules let a
signed-in user write, creating the document with the field set or updating it, as its owner would (the
fields the rules read of a document set to the user's id): a count anyone can set shows until the
counter's next commit. A warning does not change the exit code.

Uses the Firestore emulator at FIRESTORE_EMULATOR_HOST when set, else starts one for the check (the
Debian package google-cloud-cli-firestore-emulator's, or firebase-tools' download).
Exit code: 0 when every guarantee holds, 1 when one is broken (each is named) or the file does not
compile, 2 on bad arguments (no file, a file that does not exist or cannot be read, an empty file).`;

interface Args {
  file: string;
  source: string;
  /** The project folder whose MIRRORS are probed; undefined when none is found (nothing probed). */
  dir: string | undefined;
}

function parse(argv: string[]): Args | "help" {
  const read = readArgv(argv, { values: { "--dir": "the Firebase project folder (holds firebase.json)" }, positionals: { min: 1, max: 1, name: "one rules file (path/to/firestore.rules)" } });
  if (read === "help") return read;
  const given = read.positionals[0]!;
  const file = resolve(given);
  let source: string;
  try {
    if (statSync(file).isDirectory()) throw new UsageError(`${given} is a folder: name the rules file in it (firestore.rules)`);
    source = readFileSync(file, "utf8");
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(code === "ENOENT" ? `${given}: no such file` : `cannot read ${given} (${code ?? errorMessage(error)})`);
  }
  // An empty rules file would be evaluated as a file with no rules; say what it is instead.
  if (source.trim() === "") throw new UsageError(`${given} is empty: it holds no rules to check`);
  const dir = lastValue(read, "--dir");
  return { file, source, dir: dir === undefined ? folderAbove(dirname(file)) : projectDir(dir) };
}

/** The nearest folder from `start` up that holds firebase.json, if any. */
function folderAbove(start: string): string | undefined {
  for (let folder = start; ; folder = dirname(folder)) {
    if (existsSync(join(folder, "firebase.json"))) return folder;
    if (dirname(folder) === folder) return undefined;
  }
}

/** MIRRORS of the project folder's counters codebase, or why there is none to probe (a note). */
function mirrorsOf(dir: string | undefined): MirrorRule[] | string {
  if (dir === undefined) return "no firebase.json next to the file or above it: mirrored fields not probed (--dir names the project folder)";
  try {
    const source = countersSourceDir(dir);
    const mirrors = parseMirrorRules("MIRRORS", runningParams(source, firebasercProject(dir) ?? "").MIRRORS ?? "");
    return mirrors.length > 0 ? mirrors : `MIRRORS is empty in ${source}/.env: no mirrored field to probe`;
  } catch (error) {
    return `mirrored fields not probed: ${errorMessage(error)}`;
  }
}

const BLOCK_NOTE: Record<BlockStatus, string> = {
  current: "the firestore-exact-counter block is there, the same as this version's",
  outdated: "the firestore-exact-counter block differs from this version's: firestore-exact-counter init puts the current one in",
  missing: "no firestore-exact-counter block (BEGIN/END markers) in this file: firestore-exact-counter init adds it",
};

async function run({ file, source, dir }: Args): Promise<number> {
  console.log(`check-rules: ${file}`);
  let results: GuaranteeResult[];
  const mirrors = mirrorsOf(dir);
  let writable: MirrorWrite[] = [];
  try {
    results = await withFirestoreEmulator(async (host) => {
      const guarantees = await checkGuarantees(source, host);
      if (typeof mirrors !== "string") writable = await checkMirrorWrites(source, host, mirrors);
      return guarantees;
    });
  } catch (error) {
    console.error(`check-rules: ${file} could not be evaluated: ${errorMessage(error).replace(/\s*\n\s*/g, " ")}`);
    return EXIT.failed;
  }
  for (const { guarantee, breakers } of results) {
    const by = breakers.map((c) => CALLERS[c].label).join(", ");
    console.log(breakers.length === 0 ? `  ok   ${guarantee.statement}` : `  FAIL ${guarantee.statement} (broken for ${by})`);
  }
  console.log(`  note ${BLOCK_NOTE[blockStatus(source, shippedFile("firestore.rules"))]}`);
  if (typeof mirrors === "string") console.log(`  note ${mirrors}`);
  else if (writable.length === 0) console.log(`  note clients can write none of the ${mirrors.length} field${mirrors.length === 1 ? "" : "s"} MIRRORS keeps`);
  for (const write of writable) console.log(`  WARN ${mirrorWriteLine(write)}`);
  const broken = results.flatMap((r) => r.breaches);
  if (broken.length === 0) {
    console.log(`check-rules: all ${results.length} guarantees hold`);
    return 0;
  }
  const failed = results.filter((r) => r.breakers.length > 0).length;
  console.log(`check-rules: ${failed} of ${results.length} guarantees broken:\n${broken.map((b) => `  ${b}`).join("\n")}`);
  return 1;
}

export const command: Command<Args> = { name: "check-rules", help: HELP, parse, run };
