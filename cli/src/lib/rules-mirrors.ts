// Whether an app's rules let a client write a field that MIRRORS writes (docs/mirrors.md, "Keep clients
// from writing the mirrored fields"): the counters keep the field exact, but a post's author whom the app's
// rules let edit the post could set `commentCount: 999999`, and it would show until the counter's next
// commit. For each MIRRORS target, as a signed-in user whose document it is as far as the rules can tell (its
// placeholder filled with the user's id, every field the rules read of a document, `resource.data.ownerId`
// and the like, set to that id): creating the document with the field set, and updating only the field.
// Run in the Firestore emulator by check-rules and the preflight, next to the guarantee table (rules-check.ts).
import type { MirrorRule } from "../../../functions/src/model/mirror-rules";
import { fillTemplate } from "../../../functions/src/model/patterns";
import { openRulesProbes, type RulesProbeEnvironment } from "./rules-check";
import { CALLERS, type Probe } from "./rules-guarantees";

/** What a client sets a mirrored field to in a probe: a count nobody earned. */
const FAKE = 999_999;
const OWNER = CALLERS["signed-in"].uid!;

/** A mirrored field that signed-in users can write, and how. */
export interface MirrorWrite {
  mirror: MirrorRule;
  /** The document the probes used. */
  path: string;
  writes: ("create" | "update")[];
}

/** The fields the rules read of a document (`resource.data.ownerId`, `request.resource.data.author`), in order. */
export function fieldsTheRulesRead(rules: string): string[] {
  const fields = new Set<string>();
  for (const match of rules.matchAll(/\bresource\.data\.([A-Za-z_][A-Za-z0-9_]*)/g)) fields.add(match[1]!);
  return [...fields];
}

/** `{ stats: { views: n } }` for the field path `stats.views`. */
function nested(field: string, value: unknown): Record<string, unknown> {
  return field
    .split(".")
    .reverse()
    .reduce<Record<string, unknown>>((inner, key, i) => ({ [key]: i === 0 ? value : inner }), {});
}

/** The MIRRORS targets of `mirrors` that signed-in users can create with the field set, or update the field of. */
export async function checkMirrorWrites(rules: string, firestoreHost: string, mirrors: readonly MirrorRule[]): Promise<MirrorWrite[]> {
  if (mirrors.length === 0) return [];
  const probes = await openRulesProbes(rules, firestoreHost);
  try {
    const found: MirrorWrite[] = [];
    // One at a time: the probes of two targets on one document must not see each other's writes.
    for (const mirror of mirrors) {
      const writes = await probeMirror(probes, mirror, fieldsTheRulesRead(rules));
      if (writes.writes.length > 0) found.push(writes);
    }
    return found;
  } finally {
    await probes.close();
  }
}

async function probeMirror(probes: RulesProbeEnvironment, mirror: MirrorRule, owned: readonly string[]): Promise<MirrorWrite> {
  const path = fillTemplate(mirror.document, mirror.document.placeholder === null ? {} : { [mirror.document.placeholder]: OWNER });
  const top = mirror.field.split(".")[0]!;
  const own = Object.fromEntries(owned.filter((f) => f !== top).map((f) => [f, OWNER]));
  const writes: MirrorWrite["writes"] = [];
  await probes.seed([{ path, data: null }]);
  const create: Probe = { caller: "signed-in", operation: "create", target: path, data: { ...own, ...nested(mirror.field, FAKE) } };
  if (await probes.allowed(create)) writes.push("create");
  await probes.seed([{ path, data: { ...own, ...nested(mirror.field, 0) } }]);
  const update: Probe = { caller: "signed-in", operation: "update", target: path, data: { [mirror.field]: FAKE } };
  if (await probes.allowed(update)) writes.push("update");
  return { mirror, path, writes };
}

/** One line per writable mirrored field: who can do what, and where the docs say how to deny it. */
export function mirrorWriteLine({ mirror, path, writes }: MirrorWrite): string {
  const verbs = writes.map((w) => (w === "create" ? "create it with the field set" : "update the field")).join(" and ");
  return (
    `signed-in users can write ${mirror.document.source}:${mirror.field}, which MIRRORS rule "${mirror.source}" keeps: they can ${verbs} ` +
    `(probed on ${path} as user ${OWNER}, the fields the rules read of a document set to ${OWNER}), and a count they set shows until the counter's next commit; ` +
    "deny it in your rules (docs/mirrors.md, \"Keep clients from writing the mirrored fields\")"
  );
}
