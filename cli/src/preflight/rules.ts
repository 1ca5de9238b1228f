// The rules file compiles, with the production compiler (in a Firestore emulator), and keeps the counters'
// guarantees: the table check-rules runs (lib/rules-check.ts), also in the emulator; and no client can write
// a field MIRRORS keeps (lib/rules-mirrors.ts: a warning, naming each). They run in npm run preflight and,
// with --rules, as the predeploy step of firebase.json's firestore section: whenever a deploy includes
// Firestore rules.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { putRules } from "../lib/emulator-rules";
import { errorMessage } from "../lib/firebase-tools-internals";
import { checkGuarantees, type GuaranteeResult } from "../lib/rules-check";
import { checkMirrorWrites, mirrorWriteLine } from "../lib/rules-mirrors";
import { parseMirrorRules } from "../../../functions/src/model/mirror-rules";
import { envFiles, firestoreConfig, userEnvs } from "./context";
import type { CheckResult, Context } from "./types";

interface RulesIssue {
  sourcePosition?: { fileName?: string; line?: number; column?: number };
  description?: string;
  severity?: string;
}

export async function checkRules(ctx: Context): Promise<CheckResult> {
  const check = "rules";
  const rules = readRules(ctx);
  if ("error" in rules) return { check, status: "fail", message: rules.error };
  const { file, source } = rules;
  // The Firestore emulator compiles rules with the same compiler as production and answers with the
  // issues (warnings) or a compile error; its own project id keeps them away from anything else.
  let response: Response;
  try {
    response = await putRules(ctx.options.firestoreHost, "demo-preflight-rules", { name: file, content: source });
  } catch (error) {
    return { check, status: "fail", message: `could not reach the Firestore emulator at ${ctx.options.firestoreHost} to compile ${file}: ${errorMessage(error)}` };
  }
  const body = (await response.json()) as { issues?: RulesIssue[]; error?: { message?: string } };
  if (!response.ok) {
    return { check, status: "fail", message: `${file} does not compile: ${(body.error?.message ?? `HTTP ${response.status}`).replace(/\n/g, " ")}` };
  }
  const issues = (body.issues ?? []).map(
    (i) => `${i.sourcePosition?.fileName ?? file}:${i.sourcePosition?.line ?? "?"}:${i.sourcePosition?.column ?? "?"} ${i.severity ?? ""} ${i.description ?? ""}`.trim(),
  );
  if (issues.length > 0) return { check, status: "warn", message: `${file} compiles with issues: ${issues.join("; ")}` };
  return { check, status: "ok", message: `${file} compiles` };
}

/**
 * The rules file keeps every guarantee of lib/rules-guarantees.ts, evaluated with real client
 * requests in the emulator (what npm run check-rules prints, line by line): a catch-all rule of an app that
 * opens the counters' documents fails the deploy here, naming each guarantee it breaks.
 */
export async function checkRulesGuarantees(ctx: Context): Promise<CheckResult> {
  const check = "rules guarantees";
  const rules = readRules(ctx);
  if ("error" in rules) return { check, status: "fail", message: rules.error };
  const { file, source } = rules;
  try {
    const results = await guaranteesOf(source, ctx.options.firestoreHost);
    const broken = results.filter((r) => r.breakers.length > 0);
    if (broken.length === 0) return { check, status: "ok", message: `${file} keeps all ${results.length} guarantees of check-rules` };
    return {
      check,
      status: "fail",
      message: `${file}: ${broken.length} of ${results.length} guarantees broken: ${broken.flatMap((r) => r.breaches).join("; ")} (npm run check-rules -- ${file} lists them; docs/security.md)`,
    };
  } catch (error) {
    return { check, status: "fail", message: `${file} could not be evaluated: ${errorMessage(error).replace(/\s*\n\s*/g, " ")}` };
  }
}

/**
 * No client can write a field MIRRORS keeps, as far as probes of the rules can tell (lib/rules-mirrors.ts): a
 * warning naming each field clients can write (the counters stay exact; what a client sets shows until the
 * next commit, and reconcile reports it).
 */
export async function checkMirroredFields(ctx: Context): Promise<CheckResult> {
  const check = "mirrored fields";
  const envs = userEnvs(ctx, check);
  if ("failed" in envs) return envs.failed;
  let mirrors;
  try {
    mirrors = parseMirrorRules("MIRRORS", envs.values.MIRRORS ?? "");
  } catch {
    return { check, status: "ok", message: "MIRRORS does not parse (its own check says why): no mirrored field to probe" };
  }
  if (mirrors.length === 0) return { check, status: "ok", message: "MIRRORS is empty: no mirrored field" };
  const rules = readRules(ctx);
  if ("error" in rules) return { check, status: "fail", message: rules.error };
  try {
    const writable = await checkMirrorWrites(rules.source, ctx.options.firestoreHost, mirrors);
    if (writable.length === 0) return { check, status: "ok", message: `${rules.file}: clients can write none of the ${mirrors.length} fields MIRRORS keeps (${envFiles(ctx).base})` };
    return { check, status: "warn", message: `${rules.file}: ${writable.map(mirrorWriteLine).join("; ")}` };
  } catch (error) {
    return { check, status: "fail", message: `${rules.file} could not be evaluated: ${errorMessage(error).replace(/\s*\n\s*/g, " ")}` };
  }
}

/** The rules file firebase.json names, and its text; or why it cannot be read. */
function readRules(ctx: Context): { file: string; source: string } | { error: string } {
  try {
    const file = firestoreConfig(ctx).rules ?? "";
    if (file === "") throw new Error("firebase.json names no firestore.rules file");
    return { file, source: readFileSync(join(ctx.options.projectDir, file), "utf8") };
  } catch (error) {
    return { error: errorMessage(error) };
  }
}

/** Results per emulator and rules text: the same rules keep the same guarantees (one process checks many copies in the tests). */
const evaluated = new Map<string, Promise<GuaranteeResult[]>>();

function guaranteesOf(source: string, firestoreHost: string): Promise<GuaranteeResult[]> {
  const key = `${firestoreHost}\u0000${source}`;
  let results = evaluated.get(key);
  if (results === undefined) {
    results = checkGuarantees(source, firestoreHost);
    evaluated.set(key, results);
    results.catch(() => evaluated.delete(key));
  }
  return results;
}
