// What this repository's `npm test` and `npm start` need from the machine besides npm's packages
// (docs/development.md, "Requirements"), checked before anything else runs, so that a machine without one
// hears it in one line at once instead of after minutes of builds and a page of failed tests: Java 17 or
// newer (the Firestore emulator), the Firestore emulator itself, and for the tests Chromium (the browser
// tests). The emulator is not a stop: firebase-tools downloads its own when neither the Debian package's
// jar nor FIRESTORE_EMULATOR_BINARY_PATH nor an earlier download is there, which only an offline machine
// cannot do; that is said in one line, and the run goes on. Pure but for `probeMachine`.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { downloadableEmulators } from "../../cli/src/lib/firebase-tools-internals";
import { firestoreEmulatorBinary } from "../../cli/src/lib/launcher";
import { CHROMIUM_PATH } from "./chromium";
import { REPO_ROOT } from "./firebase-cli";

/** The oldest Java the Firestore emulator runs on (and firebase-tools 14.27 accepts, with a warning below 21). */
export const MIN_JAVA = 17;

/** What the checks read of the machine. */
export interface Machine {
  /** What `java -version` printed, or undefined when there is no `java` on PATH. */
  javaVersion: string | undefined;
  /** The Firestore emulator the suite would start, if one is on the machine. */
  firestoreEmulator: string | undefined;
  chromium: { path: string; exists: boolean };
}

export interface Requirement {
  what: string;
  /** Why it is missing, and the command that installs it. */
  fix: string;
}

export interface RequirementsCheck {
  missing: Requirement[];
  /** Said, not stopped for. */
  notes: string[];
}

/** The major version in `java -version`'s output: 17 for `openjdk version "17.0.13"`, 8 for `"1.8.0_392"`. */
export function javaMajor(output: string): number | undefined {
  const version = /version "(\d+)(?:\.(\d+))?/.exec(output);
  if (version === null) return undefined;
  const first = Number(version[1]);
  return first === 1 && version[2] !== undefined ? Number(version[2]) : first;
}

/** What is missing for `npm test` (Chromium too) or `npm start`. */
export function checkRequirements(machine: Machine, needs: { chromium: boolean }): RequirementsCheck {
  const missing: Requirement[] = [];
  const notes: string[] = [];
  const java = machine.javaVersion === undefined ? undefined : javaMajor(machine.javaVersion);
  if (java === undefined || java < MIN_JAVA) {
    const found = machine.javaVersion === undefined ? "no java on PATH" : java === undefined ? "java -version names no version" : `java ${java}`;
    missing.push({ what: `Java ${MIN_JAVA}+ (the Firestore emulator)`, fix: `${found}: apt-get install -y openjdk-17-jre-headless` });
  }
  if (machine.firestoreEmulator === undefined) {
    notes.push(
      "the Firestore emulator is not installed: firebase-tools downloads it now, which needs the internet " +
        "(offline: apt-get install -y google-cloud-cli-firestore-emulator, from Google Cloud's apt repository)",
    );
  }
  if (needs.chromium && !machine.chromium.exists) {
    missing.push({ what: "Chromium (the browser tests)", fix: `no ${machine.chromium.path}: apt-get install -y chromium, or set CHROMIUM_PATH` });
  }
  return { missing, notes };
}

/** The one line that stops `purpose`: every missing requirement with what installs it. */
export function missingLine(purpose: string, missing: readonly Requirement[]): string {
  return `${purpose} needs ${missing.map((m) => `${m.what} (${m.fix})`).join(" and ")}; see docs/development.md#requirements`;
}

/** The machine as the emulator suite would find it. */
export function probeMachine(env: NodeJS.ProcessEnv = process.env): Machine {
  const java = spawnSync("java", ["-version"], { encoding: "utf8", env, timeout: 30_000 });
  const javaVersion = java.error === undefined ? `${java.stderr}${java.stdout}` : undefined;
  return { javaVersion, firestoreEmulator: firestoreEmulator(env), chromium: { path: CHROMIUM_PATH, exists: existsSync(CHROMIUM_PATH) } };
}

/** The emulator scripts/lib/firebase-cli.ts would give firebase-tools, or the one firebase-tools downloaded before. */
function firestoreEmulator(env: NodeJS.ProcessEnv): string | undefined {
  const local = firestoreEmulatorBinary(join(REPO_ROOT, ".cache"), env);
  if (local !== undefined) return local;
  const downloaded = downloadableEmulators.getDownloadDetails("firestore").downloadPath;
  return existsSync(downloaded) ? downloaded : undefined;
}
