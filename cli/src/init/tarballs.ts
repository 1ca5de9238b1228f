// Package specs as the codebase's package.json holds them. A version, a range or a tag stays as it is (the
// registry's packages). A tarball (npm pack's .tgz) is copied into the codebase folder and named by a path
// relative to it (`file:./firestore-exact-counter-functions-0.2.0.tgz`): the app's repository then carries
// it, so a clone installs with `npm ci` in any folder, and `firebase deploy`, which uploads the codebase
// folder alone and installs it there, finds it too. A folder is named as it was given (relative to the
// codebase folder when it lies inside the project), with a warning: neither a clone elsewhere nor the
// deploy's build can install it. Pure but for reading the file system.
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import { refuse } from "./firebase-json";

/** A tarball init copies into the codebase folder. */
export interface TarballCopy {
  /** The tarball as given, resolved. */
  source: string;
  /** Its name in the codebase folder. */
  name: string;
}

export interface ResolvedSpec {
  /** What package.json names. */
  spec: string;
  copy?: TarballCopy;
  warning?: string;
}

const TARBALL = /\.(tgz|tar\.gz|tar)$/;

function looksLikePath(spec: string): boolean {
  return spec.startsWith(".") || isAbsolute(spec) || TARBALL.test(spec) || spec.startsWith("file:");
}

function inside(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

const posix = (path: string) => path.split(sep).join("/");

/** `spec` (the value of `option`, relative to `cwd`) as the codebase's package.json names it, and what init copies for it. */
export function resolveSpec(option: string, spec: string, codebaseDir: string, projectDir: string, cwd = process.cwd()): ResolvedSpec {
  if (!looksLikePath(spec)) return { spec };
  const path = resolve(cwd, spec.replace(/^file:/, ""));
  if (!existsSync(path)) refuse(`${option} ${spec}: no such file or folder (give a version, or a tarball that npm pack wrote)`);
  if (statSync(path).isFile()) {
    if (!TARBALL.test(path)) refuse(`${option} ${spec}: not a tarball (npm pack writes a .tgz) nor a folder`);
    if (inside(codebaseDir, path)) return { spec: `file:./${posix(relative(codebaseDir, path))}` };
    const name = basename(path);
    return { spec: `file:./${name}`, copy: { source: path, name } };
  }
  const named = inside(projectDir, path) ? posix(relative(codebaseDir, path)) : path;
  const folder = posix(relative(projectDir, codebaseDir));
  return inside(codebaseDir, path)
    ? { spec: `file:${named}` }
    : {
        spec: `file:${named}`,
        warning:
          `${option} ${spec} is a folder outside ${folder}/: npm links it, so a clone of the app in another folder and firebase deploy ` +
          `(which uploads ${folder}/ alone and installs there) cannot install it; give init a tarball (npm pack) instead`,
      };
}

/** Whether the codebase folder holds `copy` already, byte for byte. */
export function copied(codebaseDir: string, copy: TarballCopy): boolean {
  const there = join(codebaseDir, copy.name);
  return existsSync(there) && readFileSync(there).equals(readFileSync(copy.source));
}

/**
 * The tarballs of the codebase folder that its package.json named for `packages` before (`file:./x.tgz`)
 * and names no more: init replaces them, so they go. Names are relative to the codebase folder.
 */
export function replacedTarballs(existing: string | undefined, packages: readonly string[], specs: readonly string[], codebaseDir: string): string[] {
  if (existing === undefined) return [];
  let pkg: { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
  try {
    pkg = JSON.parse(existing) as typeof pkg;
  } catch {
    return [];
  }
  const before = packages.map((name) => pkg.dependencies?.[name] ?? pkg.devDependencies?.[name]);
  const kept = new Set(specs.map((spec) => tarballIn(codebaseDir, spec)));
  const gone = before.map((spec) => (spec === undefined ? undefined : tarballIn(codebaseDir, spec))).filter((name): name is string => name !== undefined && !kept.has(name));
  return [...new Set(gone)].filter((name) => existsSync(join(codebaseDir, name)));
}

/** The codebase-relative path of a `file:` spec naming a tarball inside the codebase folder. */
function tarballIn(codebaseDir: string, spec: string): string | undefined {
  if (!spec.startsWith("file:") || !TARBALL.test(spec)) return undefined;
  const path = resolve(codebaseDir, spec.slice("file:".length));
  return inside(codebaseDir, path) ? posix(relative(codebaseDir, path)) : undefined;
}
