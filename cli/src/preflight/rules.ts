// The rules file compiles, with the production compiler (in a Firestore emulator). Whether it keeps the
// counters' guarantees is check-rules (lib/rules-check.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { errorMessage } from "../lib/firebase-tools-internals";
import { firestoreConfig } from "./context";
import type { CheckResult, Context } from "./types";

interface RulesIssue {
  sourcePosition?: { fileName?: string; line?: number; column?: number };
  description?: string;
  severity?: string;
}

export async function checkRules(ctx: Context): Promise<CheckResult> {
  const check = "rules";
  let file: string;
  let source: string;
  try {
    file = firestoreConfig(ctx).rules ?? "";
    if (file === "") throw new Error("firebase.json names no firestore.rules file");
    source = readFileSync(join(ctx.options.projectDir, file), "utf8");
  } catch (error) {
    return { check, status: "fail", message: errorMessage(error) };
  }
  // The Firestore emulator compiles rules with the same compiler as production and answers with the
  // issues (warnings) or a compile error; its own project id keeps them away from anything else.
  const url = `http://${ctx.options.firestoreHost}/emulator/v1/projects/demo-preflight-rules:securityRules`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ rules: { files: [{ name: file, content: source }] } }),
    });
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
