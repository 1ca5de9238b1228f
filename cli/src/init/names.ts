// The app's function names against ours. Function names are per project, whatever the codebase: a name
// of ours that another codebase of the app exports fails every deploy that loads both, and a deploy of
// ours alone takes the app's deployed function over (firebase-tools matches deployed functions to
// codebases by name). Each codebase is loaded the way a deploy loads it (codebases.ts: the functions SDK's
// manifest, read by running its code), so what it exports is what a deploy would see.
import { discoverBuild, type ProjectRef } from "../lib/codebases";
import { errorMessage } from "../lib/firebase-tools-internals";
import { codebaseName, type CodebaseEntry } from "../lib/project";
import { DEPLOYED_FUNCTIONS } from "../preflight/manifest";

export interface NameCheck {
  /** "codebase "default" (functions/) exports createCounter" for each clash. */
  clashes: string[];
  /** Codebases that could not be loaded, and why. */
  unreadable: string[];
  /** Codebases compared, with how many functions each exports. */
  compared: string[];
}

export async function checkFunctionNames(project: ProjectRef, others: CodebaseEntry[]): Promise<NameCheck> {
  const result: NameCheck = { clashes: [], unreadable: [], compared: [] };
  for (const entry of others) {
    const name = codebaseName(entry);
    if (entry.source === undefined) continue; // a remote source: nothing local to load
    try {
      const build = await discoverBuild(project, { source: entry.source, codebase: entry.codebase });
      const ids = Object.keys(build.endpoints);
      result.compared.push(`"${name}" (${ids.length} function${ids.length === 1 ? "" : "s"})`);
      const taken = ids.filter((id) => DEPLOYED_FUNCTIONS.includes(id));
      if (taken.length > 0) result.clashes.push(`codebase "${name}" (${entry.source}/) exports ${taken.join(", ")}`);
    } catch (error) {
      result.unreadable.push(`codebase "${name}" (${entry.source}/): ${errorMessage(error).split("\n")[0]!}`);
    }
  }
  return result;
}
