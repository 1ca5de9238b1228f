// `firestore-exact-counter check-rules PATH/TO/firestore.rules` (in this repository: npm run check-rules):
// whether a rules file (typically an app's, with the counters' block that init put in) keeps the
// counters' guarantees. Evaluates the file in a Firestore emulator with the table the rules tests use
// (lib/rules-guarantees.ts): one line per guarantee, exit 1 naming each broken one. init runs the same
// check on the rules it writes.
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { EXIT, readArgv, UsageError, type Command } from "../lib/cli";
import { withFirestoreEmulator } from "../lib/firestore-emulator";
import { shippedFile } from "../lib/package";
import { errorMessage } from "../lib/firebase-tools-internals";
import { blockStatus, type BlockStatus } from "../lib/rules-block";
import { checkGuarantees, type GuaranteeResult } from "../lib/rules-check";
import { ALL_CALLERS, CALLERS, GUARANTEES } from "../lib/rules-guarantees";

const HELP = `Usage: firestore-exact-counter check-rules <path/to/firestore.rules>

Checks whether a Firestore rules file keeps the counters' guarantees, by evaluating it in the Firestore
emulator with real client requests as ${ALL_CALLERS.map((c) => CALLERS[c].label).join(", ")}:
${GUARANTEES.map((g) => `  - ${g.statement}`).join("\n")}
Rules are OR'ed: a rule elsewhere in the file (a catch-all match /{document=**}, a collection-group rule)
can open what the counters' block denies. firestore-exact-counter init puts the block (marked
"BEGIN firestore-exact-counter rules") into an app's rules and runs this check on the result; run it
again after changing your rules.

Uses the Firestore emulator at FIRESTORE_EMULATOR_HOST when set, else starts one for the check (the
Debian package google-cloud-cli-firestore-emulator's, or firebase-tools' download).
Exit code: 0 when every guarantee holds, 1 when one is broken (each is named) or the file does not
compile, 2 on bad arguments (no file, a file that does not exist or cannot be read, an empty file).`;

interface Args {
  file: string;
  source: string;
}

function parse(argv: string[]): Args | "help" {
  const read = readArgv(argv, { positionals: { min: 1, max: 1, name: "one rules file (path/to/firestore.rules)" } });
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
  return { file, source };
}

const BLOCK_NOTE: Record<BlockStatus, string> = {
  current: "the firestore-exact-counter block is there, the same as this version's",
  outdated: "the firestore-exact-counter block differs from this version's: firestore-exact-counter init puts the current one in",
  missing: "no firestore-exact-counter block (BEGIN/END markers) in this file: firestore-exact-counter init adds it",
};

async function run({ file, source }: Args): Promise<number> {
  console.log(`check-rules: ${file}`);
  let results: GuaranteeResult[];
  try {
    results = await withFirestoreEmulator((host) => checkGuarantees(source, host));
  } catch (error) {
    console.error(`check-rules: ${file} could not be evaluated: ${errorMessage(error).replace(/\s*\n\s*/g, " ")}`);
    return EXIT.failed;
  }
  for (const { guarantee, breakers } of results) {
    const by = breakers.map((c) => CALLERS[c].label).join(", ");
    console.log(breakers.length === 0 ? `  ok   ${guarantee.statement}` : `  FAIL ${guarantee.statement} (broken for ${by})`);
  }
  console.log(`  note ${BLOCK_NOTE[blockStatus(source, shippedFile("firestore.rules"))]}`);
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
