// What `npm start` prints around the emulators' own output: which of firebase's lines to hide (the
// functions' debug logs, one per rollup and per callable, unless --debug), when the suite is ready,
// and the next steps then. Pure, so it is tested without starting anything.
import { COMMITTED_MESSAGE } from "../../functions/src/model/log-lines";
import type { EmulatorHosts } from "./emulator-hosts";

// eslint-disable-next-line no-control-regex -- ANSI colour codes are what this removes
const ANSI = /\u001b\[[0-9;]*m/g;

/** A function's structured log line at DEBUG severity, as the functions emulator prints it (">  {…}"). */
export function isDebugLogLine(line: string): boolean {
  const text = line.replace(ANSI, "").trim();
  if (!text.startsWith(">")) return false;
  const json = text.slice(1).trim();
  if (!json.startsWith("{")) return false;
  try {
    const entry = JSON.parse(json) as { severity?: unknown; message?: unknown };
    // The INFO line of every rollup commit is the operator's lag metric in production (docs/operations.md);
    // locally it is one line per like, so it goes with the debug lines.
    return entry.severity === "DEBUG" || (entry.severity === "INFO" && entry.message === COMMITTED_MESSAGE);
  } catch {
    return false;
  }
}

/** firebase-tools prints this once every emulator has started and the functions are loaded. */
export function isReadyLine(line: string): boolean {
  return line.replace(ANSI, "").includes("All emulators ready!");
}

export interface NextSteps {
  project: string;
  region: string;
  hosts: EmulatorHosts;
  /** The example's URL, or why it is not served. */
  example: { url: string } | { error: string };
  /** The React example's (the feed's) URL, or why it is not served. */
  reactExample: { url: string } | { error: string };
  counterId: string;
  debug: boolean;
}

/**
 * What an app adds for a like button, one statement per line, runnable as written in an async function
 * (or an ES module) that has `functions`, `firestore` and the signed-in user's `uid`: the test runs these
 * very lines against the emulators.
 */
export function appLines(counterId: string): string[] {
  return [
    "const counters = createCounterClient({ functions, firestore });",
    "let liked = false;",
    `counters.watchMember("${counterId}", uid, (value, view) => { liked = view.member; console.log("likes:", value, "you like it:", liked); });`,
    `await counters.setMember("${counterId}", !liked);   // a tap: like, or unlike`,
  ];
}

/** The block printed once the emulators are ready. */
export function nextSteps({ project, region, hosts, example, reactExample, counterId, debug }: NextSteps): string {
  const open = "url" in example ? `Open ${example.url} and tap like` : `The example is not served: ${example.error}`;
  const feed = "url" in reactExample ? `Open ${reactExample.url} for the React feed` : `The React example is not served: ${reactExample.error}`;
  return [
    "",
    "  firestore-exact-counter is running. Next:",
    `    ${open}   (unique counter ${counterId}: one like per user; another: ?counter=<id>)`,
    `    ${feed}   (useLike and useCounter: a like button, views today and comments on each post)`,
    "    npm run seed                            demo counters with some increments",
    "    npm run make-admin -- you@example.com   try the admin callables as that user (or the uid the page shows)",
    `  From your own app (docs/app.md), with functions = getFunctions(app, "${region}"), firestore = getFirestore(app) and the signed-in user's uid:`,
    ...appLines(counterId).map((line) => `    ${line}`),
    "",
    `  Project ${project}: auth ${hosts.auth}, firestore ${hosts.firestore}, functions ${hosts.functions}`,
    `  Callables: http://${hosts.functions}/${project}/${region}/<name>. No Emulator UI: it is a download this setup does without.`,
    debug
      ? "  Showing the functions' debug logs (one line per rollup and per call)."
      : "  The functions' debug logs (one line per rollup) are hidden: npm start -- --debug shows them.",
    "  Ctrl-C stops everything.",
    "",
  ].join("\n");
}
