// The three packages as users get them: `npm pack` tarballs of functions/, cli/ and client/, each built by
// its own prepack. They are packed once for a given state of their sources and shared by every test file
// and every later run: the tarballs live in .cache/packs/<hash of the sources>/, and a test that finds
// them there uses them as they are. Packing works on a copy of the sources (.cache/packs/<hash>/src), so
// a test never rebuilds functions/lib under the emulators that serve it.
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { run } from "./run";

export interface Tarballs {
  functions: string;
  cli: string;
  client: string;
}

const PACKAGES = ["functions", "cli", "client"] as const;
/** What the packages are built from: their folders (without what npm and the builds make) and the files they share. */
const SOURCES = ["functions", "cli", "client", "firestore.rules", "firestore.indexes.json", "tsconfig.base.json"];
/** What a package folder holds that its tarball is not built from (only directly in the package folder). */
const SKIPPED = new Set(["node_modules", "lib", "test", ".env", ".env.local", ".runtimeconfig.json"]);

/** Whether `path` (inside the repository) is part of what the packages are built from. */
function isSource(path: string): boolean {
  const [top, child] = relative(REPO_ROOT, path).split(sep);
  return child === undefined || !PACKAGES.includes(top as (typeof PACKAGES)[number]) || !SKIPPED.has(child);
}

function sourceFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .map((name) => join(path, name))
    .filter(isSource)
    .flatMap(sourceFiles);
}

/** A hash of every source file's path and content. */
function sourcesHash(): string {
  const hash = createHash("sha256");
  for (const file of SOURCES.flatMap((source) => sourceFiles(join(REPO_ROOT, source)))) {
    hash.update(relative(REPO_ROOT, file)).update("\0").update(readFileSync(file)).update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

/** npm as the test's own npm run started it (npm_execpath), else the one on PATH; outside any npm script's settings. */
export function npmEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => !/^npm_(package_|lifecycle_|config_(local_)?prefix$)/.test(key) && key !== "INIT_CWD"));
}

/** `npm <args>` in `cwd`, with the npm that runs the tests when there is one. */
export function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): ReturnType<typeof run> {
  const cli = process.env.npm_execpath;
  return cli !== undefined && cli.endsWith(".js") ? run(process.execPath, [cli, ...args], { cwd, env: npmEnv(env) }) : run("npm", args, { cwd, env: npmEnv(env) });
}

let packing: Promise<Tarballs> | undefined;

/** The tarballs of the current sources, packed now if no earlier test or run packed them. */
export function packedTarballs(): Promise<Tarballs> {
  packing ??= pack();
  return packing;
}

async function pack(): Promise<Tarballs> {
  const dir = join(REPO_ROOT, ".cache", "packs", sourcesHash());
  const tarballs = Object.fromEntries(PACKAGES.map((name) => [name, join(dir, `${name}.tgz`)])) as unknown as Tarballs;
  if (PACKAGES.every((name) => existsSync(tarballs[name]))) return tarballs;
  // Another test file (or suite) may be packing the same sources: pack into a folder of our own, then
  // move each tarball into place (a rename: a reader sees no tarball or a whole one).
  const work = `${dir}.${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(join(work, "src"), { recursive: true });
  for (const source of SOURCES) cpSync(join(REPO_ROOT, source), join(work, "src", source), { recursive: true, filter: isSource });
  // The copy lies inside the repository: the builds find their tools and types (tsc, esbuild,
  // firebase-functions) in its node_modules, and what npm put in a package's own node_modules (the
  // functions' zod 4, where the root has another major) through a link. A package.json of its own keeps
  // npm from taking the repository's workspaces for the project.
  for (const name of PACKAGES) {
    const own = join(REPO_ROOT, name, "node_modules");
    if (existsSync(own)) symlinkSync(own, join(work, "src", name, "node_modules"));
  }
  writeFileSync(join(work, "src", "package.json"), JSON.stringify({ name: "firestore-exact-counter-packing", private: true }));
  const packed = await npm(["pack", ...PACKAGES.map((name) => `./${name}`), "--pack-destination", work, "--json"], join(work, "src"));
  if (packed.code !== 0) throw new Error(`npm pack of ${PACKAGES.join(", ")} failed (exit ${packed.code}):\n${packed.stderr}`);
  const reports = JSON.parse(packed.stdout) as { name: string; filename: string }[];
  mkdirSync(dir, { recursive: true });
  for (const name of PACKAGES) {
    const report = reports.find((r) => r.name === `@firestore-exact-counter/${name}`);
    if (report === undefined) throw new Error(`npm pack did not report @firestore-exact-counter/${name}:\n${packed.stdout}`);
    renameSync(join(work, report.filename), tarballs[name]);
  }
  rmSync(work, { recursive: true, force: true });
  // Tarballs of earlier states of the sources are of no use any more.
  for (const other of readdirSync(join(dir, ".."))) if (/^[0-9a-f]{16}$/.test(other) && join(dir, "..", other) !== dir) rmSync(join(dir, "..", other), { recursive: true, force: true });
  return tarballs;
}
