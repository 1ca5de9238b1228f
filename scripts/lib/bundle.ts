// Bundles a browser app with esbuild the way an app's own build would (ESM, browser conditions), and
// reads the bundle's metafile to tell which builds of a Firebase SDK package went into it: one app must
// carry one copy of the Firestore SDK, or a document reference made by one copy is refused by the other
// ("Expected first argument to doc() …").
import { build, type Metafile } from "esbuild";

export interface BundleOptions {
  entry: string;
  outfile: string;
  /** Directory the bundler resolves packages from (default: the entry's). */
  absWorkingDir?: string;
}

/** Bundles `entry` into `outfile` (+ .map) and returns esbuild's metafile. */
export async function bundleBrowserApp({ entry, outfile, absWorkingDir }: BundleOptions): Promise<Metafile> {
  const result = await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
    ...(absWorkingDir !== undefined ? { absWorkingDir } : {}),
  });
  return result.metafile;
}

/**
 * The entry builds of `pkg` (e.g. "@firebase/firestore") in the bundle: file names under its dist/
 * folder that start with "index", such as ["index.esm.js"]. More than one means two copies of the SDK.
 */
export function packageBuildsIn(metafile: Metafile, pkg: string): string[] {
  const marker = `node_modules/${pkg}/dist/`;
  const builds = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const at = input.lastIndexOf(marker);
    if (at === -1) continue;
    const file = input.slice(at + marker.length);
    if (/^index\.[^/]*js$/.test(file)) builds.add(file);
  }
  return [...builds].sort();
}
