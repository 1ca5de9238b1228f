// A mirror onto documents that a document counter watches (docs/documents.md, "What it costs"): MIRRORS
// writes a counter's total into an app's document on every commit of that total, and a Firestore trigger
// fires on every write of a document it watches, whatever field the write changes (one the rule's
// conditions do not read too). So each such commit is one more invocation of that DOCUMENT_COUNTERS rule's
// trigger, which reads and writes nothing (no count changes) but is billed. The preflight names each pair.
// Pure, no Firebase import.
import type { DocumentPattern, DocumentRule } from "./document-rules";
import { segmentCanBe, segmentsOf, type MirrorRule } from "./mirror-rules";

/** A MIRRORS rule whose target documents a DOCUMENT_COUNTERS rule watches. */
export interface WatchedMirror {
  mirror: MirrorRule;
  rule: DocumentRule;
}

/** Every (mirror, rule) pair where some document is both a mirror's target and one the rule watches. */
export function watchedMirrors(mirrors: readonly MirrorRule[], rules: readonly DocumentRule[]): WatchedMirror[] {
  return mirrors.flatMap((mirror) => rules.filter((rule) => targetIsWatched(mirror, rule.document)).map((rule) => ({ mirror, rule })));
}

/**
 * Whether a document the mirror can write matches the pattern: the same number of segments; a wildcard of
 * the pattern takes any id, a literal one must be the mirror's literal segment, or a filling of its
 * placeholder segment (1+ id characters, as MIRRORS fills it).
 */
function targetIsWatched(mirror: MirrorRule, pattern: DocumentPattern): boolean {
  const target = segmentsOf(mirror.document);
  if (target.length !== pattern.segments.length) return false;
  return pattern.segments.every((segment, i) => {
    if ("wildcard" in segment) return true;
    const mine = target[i]!;
    return typeof mine === "string" ? mine === segment.literal : segmentCanBe(mine, segment.literal);
  });
}
