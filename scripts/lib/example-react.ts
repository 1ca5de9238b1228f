// The React example (examples/react, a Vite app): its production build into an ignored folder, the
// /config.json it is served with, and its rules (comments that users write themselves). Used by `npm start`
// (served beside the web example) and by its browser test. Vite ships ES modules only, so it runs as its own
// command line, as the example's `npm run build` does.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { putRules } from "../../cli/src/lib/emulator-rules";
import type { FeedConfig, Post } from "../../examples/react/src/config";
import type { EmulatorHosts } from "./emulator-hosts";
import { functionsRegion } from "./example-web";
import { REPO_ROOT } from "./firebase-cli";

export const REACT_EXAMPLE_DIR = join(REPO_ROOT, "examples", "react");
/** The feed's rules: the counters' block, and comments under posts that their authors write and delete. */
export const FEED_RULES_FILE = join(REPO_ROOT, "examples", "rules", "feed-comments.rules");
/** Where `npm start` builds it (ignored by git). */
export const REACT_EXAMPLE_OUT_DIR = join(REACT_EXAMPLE_DIR, "dist");
/** The feed `npm start` shows: their counters are created by the page when missing. */
export const REACT_EXAMPLE_POSTS: Post[] = [
  { id: "demo-1", title: "A like counts once per user" },
  { id: "demo-2", title: "Double taps, retries and offline taps count exactly" },
];

/** The example's Vite, as its node_modules (the repository's, through the workspace) has it. */
function viteBin(): string {
  const manifest = require.resolve("vite/package.json", { paths: [REACT_EXAMPLE_DIR] });
  const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as { bin: { vite: string } };
  return join(dirname(manifest), bin.vite);
}

/** `vite build` of the example into `outDir` (index.html and assets/); throws with Vite's output if it fails. */
export async function buildReactExample(outDir = REACT_EXAMPLE_OUT_DIR): Promise<void> {
  const args = [viteBin(), "build", "--outDir", outDir, "--emptyOutDir", "--logLevel", "warn"];
  try {
    await promisify(execFile)(process.execPath, args, { cwd: REACT_EXAMPLE_DIR });
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    throw new Error(`vite build of examples/react failed:\n${stdout}${stderr}`, { cause: error });
  }
}

export function feedConfig(projectId: string, emulators: EmulatorHosts, posts = REACT_EXAMPLE_POSTS): FeedConfig {
  return { projectId, region: functionsRegion(), emulators, posts };
}

/**
 * Loads a rules file into the Firestore emulator for `projectId` (the emulator keeps rules per project), in
 * place of what firebase.json gave it: the feed's comments need rules that the backend's own firestore.rules
 * does not have (it lets clients write nothing). firebase-tools loads firestore.rules again only when that
 * file changes. Throws with the emulator's message when the file does not compile.
 */
export async function loadRules(firestoreHost: string, projectId: string, file = FEED_RULES_FILE): Promise<void> {
  const response = await putRules(firestoreHost, projectId, { name: file, content: readFileSync(file, "utf8") });
  if (!response.ok) throw new Error(`the Firestore emulator refused ${file} for ${projectId}: HTTP ${response.status} ${await response.text()}`);
}
