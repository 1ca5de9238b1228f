// Which extension counters move to which of our counters: the rules of EXTENSION_COUNTERS
// (`DOCUMENT_PATTERN:FIELD=ID_PATTERN`, comma-separated, e.g. `pages/{id}:visits=page-{id}-visits`) and the
// one rule migrate-extension takes from its --document, --field and --counter. A document pattern and a
// counter-id pattern share one optional placeholder; the field is a dotted path, as the firestore-counter
// extension's clients write it (`stats.visits`). Pure, no Firebase import: the functions, the preflight and
// the command share it, so a rule means the same thing at deploy time, at run time and when migrating.
import { checkFieldPath, documentsCanCoincide, fieldsOverlap, parseDocumentPattern } from "./mirror-rules";
import { fillTemplate, matchTemplate, parseCounterIdPattern, parseListParam, splitRule, type Template } from "./patterns";

/** The subcollection the extension's clients and workers write: `<document>/_counter_shards_/{shardId}`. */
export const EXTENSION_SHARDS = "_counter_shards_";

/**
 * The fold trigger's document pattern. It is fixed at deploy time (a function's trigger cannot depend on a
 * param's value), so it uses single-segment wildcards only, which every 2nd-gen Firestore trigger
 * accepts (firebase-functions' PathPattern, Eventarc, the emulator): it serves documents of top-level
 * collections, `collection/document`, whatever their names. A rule whose documents lie deeper is refused
 * for EXTENSION_COUNTERS (parseExtensionRules) but migrates (the command needs no trigger).
 */
export const FOLD_TRIGGER_PATTERN = `{collection}/{document}/${EXTENSION_SHARDS}/{shardId}`;

/** One extension counter family: its documents and field, and the counter each document's count moves to. */
export interface ExtensionRule {
  /** The rule as written (trimmed). */
  source: string;
  document: Template;
  /** The counted field, a dotted path (`stats.visits`). */
  field: string;
  counter: Template;
}

/** A document the rule names, with the counter its count moves to. */
export interface ExtensionSource {
  /** The app's document path (`pages/home`). */
  document: string;
  field: string;
  counterId: string;
}

/** How to write one EXTENSION_COUNTERS rule. */
const FORM = "DOCUMENT_PATTERN:FIELD=ID_PATTERN (e.g. pages/{id}:visits=page-{id}-visits)";

/** Builds a rule from its three parts; throws an Error saying which part is wrong and how. */
export function extensionRule(documentText: string, field: string, counterText: string, source = `${documentText}:${field}=${counterText}`): ExtensionRule {
  let document: Template;
  try {
    document = parseDocumentPattern(documentText);
  } catch (error) {
    throw new Error(message(error));
  }
  if (document.placeholder !== null && (document.prefix.split("/").length - 1) % 2 === 0) {
    // The placeholder stands in a collection id: the documents could not be listed from a known collection.
    throw new Error(`has a document path ${JSON.stringify(documentText)} with {${document.placeholder}} in a collection id; it may only stand in a document id`);
  }
  checkFieldPath(field);
  let counter: Template;
  try {
    counter = parseCounterIdPattern(counterText);
  } catch (error) {
    throw new Error(`has a counter-id pattern ${JSON.stringify(counterText)} that ${message(error)}`);
  }
  if (counter.placeholder !== document.placeholder) {
    if (counter.placeholder === null) throw new Error(`uses {${document.placeholder}} in the document path but not in the counter-id pattern`);
    if (document.placeholder === null) throw new Error(`uses {${counter.placeholder}} in the counter-id pattern but not in the document path`);
    throw new Error(`names the placeholder {${document.placeholder}} in the document path but {${counter.placeholder}} in the counter-id pattern`);
  }
  return { source, document, field, counter };
}

/** Parses one EXTENSION_COUNTERS rule; throws an Error saying what is wrong (callers add which rule). */
function parseRule(text: string): ExtensionRule {
  const { left, right } = splitRule(text, FORM);
  const colon = left.indexOf(":");
  if (colon === -1) throw new Error(`has no ":" between the document path and the field: write ${FORM}`);
  if (left.indexOf(":", colon + 1) !== -1) throw new Error('has more than one ":"');
  const rule = extensionRule(left.slice(0, colon).trim(), left.slice(colon + 1).trim(), right, text);
  const segments = rule.document.source.split("/").length;
  if (segments !== 2) {
    throw new Error(
      `has a document path ${JSON.stringify(rule.document.source)} with ${segments} segments: the fold trigger serves documents of top-level collections ` +
        `(collection/document) only; migrate the others with migrate-extension, and ship the new client to their apps before running it`,
    );
  }
  return rule;
}

/**
 * Parses an EXTENSION_COUNTERS value (comma-separated rules; empty = none), once per value. Two rules that
 * can name the same field of one document (or a field and a map holding it) are refused: one amount would
 * belong to two counters. Throws a PatternError naming the param, the rule's position and the rule.
 */
export function parseExtensionRules(param: string, value: string): ExtensionRule[] {
  // parseListParam parses the rules in order, so `earlier` holds the rules before the one being parsed.
  const earlier: ExtensionRule[] = [];
  return parseListParam(param, value, "rule", (entry) => {
    const rule = parseRule(entry);
    const i = earlier.findIndex((e) => documentsCanCoincide(e.document, rule.document) && fieldsOverlap(e.field, rule.field));
    if (i !== -1) {
      const other = earlier[i]!;
      throw new Error(
        `counts ${rule.field === other.field ? `the field ${rule.field}` : `the fields ${other.field} and ${rule.field} (one holds the other)`} of the same documents as rule ${i + 1} ` +
          `(${other.source}): an amount would move to two counters; give each field one rule`,
      );
    }
    earlier.push(rule);
    return rule;
  });
}

/**
 * The counter `documentPath`'s count moves to under `rule`, or null when the rule does not name that
 * document. A document id that a counter id cannot hold (a space, a dot, more than 128 characters) is not
 * named: see nearMiss.
 */
export function sourceFor(rule: ExtensionRule, documentPath: string): ExtensionSource | null {
  const binding = matchTemplate(rule.document, documentPath);
  if (binding === null) return null;
  const counterId = fillTemplate(rule.counter, binding);
  if (counterId.length > 128) return null;
  return { document: documentPath, field: rule.field, counterId };
}

/** Every rule's source for `documentPath`: one per counted field of that document. */
export function sourcesFor(rules: readonly ExtensionRule[], documentPath: string): ExtensionSource[] {
  return rules.map((rule) => sourceFor(rule, documentPath)).filter((s): s is ExtensionSource => s !== null);
}

/**
 * The other way round: every source whose count moves into `counterId` (one per rule whose counter-id
 * pattern matches it, its document filled in with the same value). What createCounter, the admin entry and
 * AUTO_CREATE settle when they create that counter (model/extension-field.ts).
 */
export function sourcesOfCounter(rules: readonly ExtensionRule[], counterId: string): ExtensionSource[] {
  const sources: ExtensionSource[] = [];
  for (const rule of rules) {
    const binding = matchTemplate(rule.counter, counterId);
    if (binding !== null) sources.push({ document: fillTemplate(rule.document, binding), field: rule.field, counterId });
  }
  return sources;
}

/**
 * Whether `documentPath` lies in the collection a rule's documents are listed from, without being one of
 * its documents (`pages/hello world` for `pages/{id}`): its count cannot move to a counter, which a
 * migration reports instead of passing over it in silence.
 */
export function nearMiss(rule: ExtensionRule, documentPath: string): boolean {
  const parent = collectionOf(rule);
  return parent !== null && documentPath.slice(0, documentPath.lastIndexOf("/")) === parent && sourceFor(rule, documentPath) === null;
}

/**
 * The literal collection path a rule's documents live in (`pages` for `pages/{id}`, `sites/main/pages` for
 * `sites/main/pages/p-{id}`), or null when the placeholder stands in an earlier segment (`users/{id}/stats/main`).
 */
export function collectionOf(rule: ExtensionRule): string | null {
  const { document } = rule;
  if (document.placeholder === null) return document.prefix.slice(0, document.prefix.lastIndexOf("/"));
  // The placeholder is in a document id (extensionRule): the last one when nothing after it has a "/".
  return document.suffix.includes("/") ? null : document.prefix.slice(0, document.prefix.lastIndexOf("/"));
}

/** The collection id of a rule's documents (`pages`), for a collection-group listing when collectionOf is null. */
export function collectionIdOf(rule: ExtensionRule): string {
  const segments = fillTemplate(rule.document, rule.document.placeholder === null ? {} : { [rule.document.placeholder]: "x" }).split("/");
  return segments[segments.length - 2]!;
}

/** A rule as the preflight and the guide show it. */
export function describeRule(rule: ExtensionRule): string {
  return `${rule.document.source}:${rule.field} -> ${rule.counter.source}`;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
