// The example web app (examples/web): its build (an esbuild bundle plus index.html, into an ignored
// folder) and the /config.json it is served with. Used by `npm start` and by its browser test.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Metafile } from "esbuild";
import type { ExampleConfig } from "../../examples/web/src/config";
import { bundleBrowserApp } from "./bundle";
import type { EmulatorHosts } from "./emulator-hosts";
import { REPO_ROOT } from "./firebase-cli";

export const EXAMPLE_DIR = join(REPO_ROOT, "examples", "web");
/** Where `npm start` builds the example (ignored by git). */
export const EXAMPLE_OUT_DIR = join(EXAMPLE_DIR, "dist");
/** The counter the page shows by default: a unique counter (one like per user), created by the page. */
export const EXAMPLE_COUNTER = "demo-post-likes";

/** Bundles the page into `outDir` (app.js, app.js.map, index.html) and returns the bundle's metafile. */
export async function buildExample(outDir = EXAMPLE_OUT_DIR): Promise<Metafile> {
  mkdirSync(outDir, { recursive: true });
  const metafile = await bundleBrowserApp({ entry: join(EXAMPLE_DIR, "src", "main.ts"), outfile: join(outDir, "app.js") });
  copyFileSync(join(EXAMPLE_DIR, "index.html"), join(outDir, "index.html"));
  return metafile;
}

/** The functions' region: REGION in functions/.env (the value the emulator serves them under). */
export function functionsRegion(envFile = join(REPO_ROOT, "functions", ".env")): string {
  const match = /^\s*REGION\s*=\s*(\S+)\s*$/m.exec(readFileSync(envFile, "utf8"));
  return match?.[1] ?? "us-central1";
}

export function exampleConfig(projectId: string, emulators: EmulatorHosts, counterId = EXAMPLE_COUNTER): ExampleConfig {
  return { projectId, region: functionsRegion(), emulators, counterId };
}
