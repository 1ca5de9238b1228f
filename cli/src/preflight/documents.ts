// DOCUMENT_COUNTERS (docs/documents.md), parsed by the functions' own parser from the values a deploy would
// use: a bad rule fails here, naming it; so does a rule whose counters another param names too
// (UNIQUE_COUNTERS: a unique counter counts members; AUTO_CREATE: it would create the counter empty for
// anyone's first call; EXTENSION_COUNTERS: old clients' amounts would add to the count). It says which
// triggers the rules deploy, by the names they deploy under, and warns of a MIRRORS target that a rule's
// trigger watches (functions/src/model/mirror-watch.ts): every commit of the mirrored total invokes that
// trigger once more.
import { parseAutoCreateRules } from "../../../functions/src/model/auto-create-rules";
import { describeDocumentRule, documentRuleClashes, parseDocumentCounterRules } from "../../../functions/src/model/document-rules";
import { documentTriggers } from "../../../functions/src/model/document-triggers";
import { parseExtensionRules } from "../../../functions/src/model/extension-rules";
import { parseMirrorRules } from "../../../functions/src/model/mirror-rules";
import { PARAMS } from "../../../functions/src/model/params";
import { watchedMirrors } from "../../../functions/src/model/mirror-watch";
import { parseCounterIdPatterns } from "../../../functions/src/model/patterns";
import { errorMessage } from "../lib/firebase-tools-internals";
import { envFiles, userEnvs } from "./context";
import type { CheckResult, Context } from "./types";

export function checkDocumentCounters(ctx: Context): CheckResult {
  const check = "document counters";
  const env = envFiles(ctx);
  const envs = userEnvs(ctx, check);
  if ("failed" in envs) return envs.failed;
  const value = (name: string) => envs.values[name] ?? "";
  try {
    const rules = parseDocumentCounterRules("DOCUMENT_COUNTERS", value("DOCUMENT_COUNTERS"));
    if (rules.length === 0) return { check, status: "ok", message: "DOCUMENT_COUNTERS is empty: no document trigger is deployed" };
    const clashes = documentRuleClashes(rules, {
      UNIQUE_COUNTERS: safely(() => parseCounterIdPatterns("UNIQUE_COUNTERS", value("UNIQUE_COUNTERS")).map((p) => ({ source: p.source, counter: p }))),
      AUTO_CREATE: safely(() => parseAutoCreateRules("AUTO_CREATE", value("AUTO_CREATE"))),
      EXTENSION_COUNTERS: safely(() => parseExtensionRules("EXTENSION_COUNTERS", value("EXTENSION_COUNTERS"))),
    });
    if (clashes.length > 0) return { check, status: "fail", message: `${clashes.join("; ")}; fix it in ${env.base} or ${env.project}` };
    const deployed = documentTriggers(rules);
    const triggers = deployed.map((t) => `${t.id} on ${t.path} (${t.rules.map(describeDocumentRule).join("; ")})`);
    const message = `DOCUMENT_COUNTERS deploys ${triggers.length} trigger${triggers.length === 1 ? "" : "s"}: ${triggers.join(", ")}`;
    const interval = Number(value("ROLLUP_INTERVAL_MS"));
    const intervalMs = Number.isSafeInteger(interval) && interval > 0 ? interval : PARAMS.ROLLUP_INTERVAL_MS.default; // a bad one: its own check says so
    const watched = watchedMirrors(safely(() => parseMirrorRules("MIRRORS", value("MIRRORS"))), rules).map(({ mirror, rule }) => {
      const trigger = deployed.find((t) => t.rules.includes(rule))!.id;
      return (
        `MIRRORS rule "${mirror.source}" writes ${mirror.document.source}, which DOCUMENT_COUNTERS rule ${rule.position} "${rule.source}" watches: ` +
        `every commit of that counter's total invokes ${trigger} once more (up to one per ROLLUP_INTERVAL_MS, ${intervalMs} ms, while the counter moves: ` +
        `up to ${Math.floor(86_400_000 / intervalMs).toLocaleString("en-US")} invocations a day per counter), which reads and writes nothing but is billed; ` +
        "a field its conditions do not read invokes it all the same (a Firestore trigger fires on every write of a document it watches): " +
        "mirror into a document no rule watches (a document of a subcollection, such as posts/{id}/stats/counts)"
      );
    });
    if (watched.length > 0) return { check, status: "warn", message: `${message}; ${watched.join("; ")}` };
    return { check, status: "ok", message };
  } catch (error) {
    return { check, status: "fail", message: `${errorMessage(error)}; fix it in ${env.base} or ${env.project}` };
  }
}

function safely<T>(parse: () => T[]): T[] {
  try {
    return parse();
  } catch {
    return []; // that param's own check names what is wrong
  }
}
