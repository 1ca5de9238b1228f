// What the params say, as one type (Settings) with one builder (settingsOf) and two sources: the deployed
// params of the counters codebase (config/read.ts, deployedSettings: firebase-functions params, read by the
// callables and the triggers) and an environment (functions/src/model/env-settings.ts: the admin entry, in
// an app's own code, and the tools, which read a codebase's .env files). The same names, defaults
// (params.ts), ranges (param-rules.ts) and parsers on both sides, so a value means the same thing on both.
// Each part is read, and checked, when a call first needs it and then kept for the rest of the call (one
// Settings per call: entry/oncall.ts, admin/operations.ts), so a bad value stops only the operations that
// use it. Also, pure, the shape a new counter gets from them: createCounter, the admin entry and
// AUTO_CREATE all make it here.
import { autoCreateTarget, parseAutoCreateRules, type AutoCreateTarget } from "./auto-create-rules";
import { parseDocumentCounterRules, ruleNaming } from "./document-rules";
import { parseExtensionRules, sourcesOfCounter, type ExtensionSource } from "./extension-rules";
import { callersKindFor, kindFor, parseCounterKindRules, shardsFor, type CounterKind, type KindLimits } from "./kinds";
import { boardOf, parseLeaderboardRules } from "./leaderboard-rules";
import { mirrorTargets, parseMirrorRules, type MirrorTarget } from "./mirror-rules";
import { paramProblem, relationProblems, type CreatePolicy, type RawValue } from "./param-rules";
import type { ParamName } from "./params";
import { parseCounterIdPatterns, reservedFlag, type Template } from "./patterns";
import type { RateLimit } from "./ratelimit";
import type { Limits } from "./schema";

/** The bounds of one call: the schemas' limits, DEFAULT_SHARDS and the idempotency records' lifetime. */
export interface OperationLimits extends Limits {
  defaultShards: number;
  requestTtlMs: number;
}

/** Who may call the callables at all, and how often: their gate (entry/oncall.ts). */
export interface CallerGate {
  allowUnauthenticated: boolean;
  enforceAppCheck: boolean;
  rateLimit: RateLimit;
}

/** What the params say. Each method reads (and checks) its params when first called; it throws, naming the param, for a bad value. */
export interface Settings {
  /** A param's value as the source holds it, unchecked: what is published and compared (model/deployed-params.ts). */
  paramValue(name: ParamName): RawValue;
  /** DATABASE_ID: the database the counters live in. */
  databaseId(): string;
  /** DEFAULT_SHARDS, MAX_SHARDS, MAX_GROWN_SHARDS, MAX_DELTA, REQUEST_TTL_HOURS. */
  limits(): OperationLimits;
  /** ALLOW_UNAUTHENTICATED, ENFORCE_APP_CHECK, RATE_LIMIT_PER_MINUTE, RATE_LIMIT_BURST. */
  gate(): CallerGate;
  /** CREATE_POLICY: who may call createCounter. */
  createPolicy(): CreatePolicy;
  /** UNIQUE_COUNTERS. */
  uniquePatterns(): Template[];
  /** WINDOWED_COUNTERS. */
  windowedPatterns(): Template[];
  /** The COUNTER_KINDS rule `counterId` matches first (throws for ids a bad rule could match: kinds.ts, kindFor). */
  kindFor(counterId: string, limits: KindLimits): CounterKind | undefined;
  /** The COUNTER_KINDS rule whose callers decides what a client may do with `counterId` (kinds.ts, callersKindFor). */
  callersKindFor(counterId: string, limits: KindLimits): CounterKind | undefined;
  /** Where MIRRORS writes `counterId`'s total and windows. */
  mirrorsFor(counterId: string): MirrorTarget[];
  /** The app document (and the conditions on it) that lets a missing `counterId` create itself on its first call (AUTO_CREATE), if a rule matches. */
  autoCreateFor(counterId: string): AutoCreateTarget | undefined;
  /** The firestore-counter extension's fields whose count moves to `counterId` (EXTENSION_COUNTERS): what its creation takes over. */
  extensionSourcesFor(counterId: string): ExtensionSource[];
  /** The DOCUMENT_COUNTERS rule that names `counterId`, if any (as written): only its documents move that counter. */
  documentRuleFor(counterId: string): string | undefined;
  /** The leaderboard `counterId` is on (LEADERBOARDS), if a rule names it: its writes of the total carry its entry. */
  boardFor(counterId: string): string | undefined;
  /** ROLLUP_INTERVAL_MS: what a commit by the tools records (rollup/plan.ts, intervalToRecord). */
  rollupIntervalMs(): number;
  /** RECOUNT_LIMIT: the most documents a document counter is kept by recount. */
  recountLimit(): number;
}

/**
 * The Settings of one source: `read` gives a param's value as the source holds it (a number or a boolean
 * from a declared param, text from an environment), `refusal` the error for a value out of range (its
 * message names the param and where to set it). Each param is read from the source once, when first
 * needed; the rule params are parsed once per value by their parsers.
 */
export function settingsOf(read: (name: ParamName) => RawValue, refusal: (problem: string) => Error): Settings {
  const seen = new Map<ParamName, RawValue>();
  const raw = (name: ParamName): RawValue => {
    if (!seen.has(name)) seen.set(name, read(name));
    return seen.get(name);
  };
  const text = (name: ParamName): string => String(raw(name));
  const checked = (name: ParamName): RawValue => {
    const problem = paramProblem(name, raw(name));
    if (problem !== undefined) throw refusal(problem);
    return raw(name);
  };
  const int = (name: ParamName): number => Number(checked(name));
  const bool = (name: ParamName): boolean => {
    const flag = checked(name);
    return flag === true || flag === "true";
  };
  return {
    paramValue: raw,
    databaseId: once(() => String(checked("DATABASE_ID"))),
    limits: once(() => {
      const values = {
        DEFAULT_SHARDS: int("DEFAULT_SHARDS"),
        MAX_SHARDS: int("MAX_SHARDS"),
        MAX_GROWN_SHARDS: int("MAX_GROWN_SHARDS"),
        MAX_DELTA: int("MAX_DELTA"),
        REQUEST_TTL_HOURS: int("REQUEST_TTL_HOURS"),
      };
      const problem = relationProblems(values)[0];
      if (problem !== undefined) throw refusal(problem);
      return {
        defaultShards: values.DEFAULT_SHARDS,
        maxShards: values.MAX_SHARDS,
        maxGrownShards: values.MAX_GROWN_SHARDS,
        maxDelta: values.MAX_DELTA,
        requestTtlMs: values.REQUEST_TTL_HOURS * 3_600_000,
      };
    }),
    gate: once(() => ({
      rateLimit: { perMinute: int("RATE_LIMIT_PER_MINUTE"), burst: int("RATE_LIMIT_BURST") },
      allowUnauthenticated: bool("ALLOW_UNAUTHENTICATED"),
      enforceAppCheck: bool("ENFORCE_APP_CHECK"),
    })),
    createPolicy: once(() => checked("CREATE_POLICY") as CreatePolicy),
    uniquePatterns: once(() => parseCounterIdPatterns("UNIQUE_COUNTERS", text("UNIQUE_COUNTERS"))),
    windowedPatterns: once(() => parseCounterIdPatterns("WINDOWED_COUNTERS", text("WINDOWED_COUNTERS"))),
    kindFor: (counterId, limits) => kindFor(parseCounterKindRules("COUNTER_KINDS", text("COUNTER_KINDS"), limits), counterId),
    callersKindFor: (counterId, limits) => callersKindFor(parseCounterKindRules("COUNTER_KINDS", text("COUNTER_KINDS"), limits), counterId),
    mirrorsFor: (counterId) => mirrorTargets(parseMirrorRules("MIRRORS", text("MIRRORS")), counterId),
    autoCreateFor: (counterId) => autoCreateTarget(parseAutoCreateRules("AUTO_CREATE", text("AUTO_CREATE")), counterId),
    extensionSourcesFor: (counterId) => sourcesOfCounter(parseExtensionRules("EXTENSION_COUNTERS", text("EXTENSION_COUNTERS")), counterId),
    documentRuleFor: (counterId) => ruleNaming(parseDocumentCounterRules("DOCUMENT_COUNTERS", text("DOCUMENT_COUNTERS")), counterId)?.source,
    boardFor: (counterId) => boardOf(parseLeaderboardRules("LEADERBOARDS", text("LEADERBOARDS")), counterId),
    rollupIntervalMs: once(() => int("ROLLUP_INTERVAL_MS")),
    recountLimit: once(() => int("RECOUNT_LIMIT")),
  };
}

/** `read`, called once: later calls get its value (a throw is not kept: the next call reads again, and throws again). */
function once<T>(read: () => T): () => T {
  let done: { value: T } | undefined;
  return () => (done ??= { value: read() }).value;
}

/** What a counter is created as. */
export interface NewCounter {
  numShards: number;
  unique: boolean;
  windowed: boolean;
  mirrors: MirrorTarget[];
  /** The leaderboard it is on (LEADERBOARDS), if any: it is created on it, at 0. */
  board?: string;
}

/** What a caller may ask of a new counter (createCounter's optional fields). */
export interface Requested {
  numShards?: number | undefined;
  unique?: boolean | undefined;
  windowed?: boolean | undefined;
}

/**
 * The counter `counterId` is created as: what was asked, within what the params declare for its id
 * (UNIQUE_COUNTERS and WINDOWED_COUNTERS reserve the flags, COUNTER_KINDS the shard count, DEFAULT_SHARDS
 * otherwise; MIRRORS its targets; LEADERBOARDS its board). Throws invalid-argument, naming the field and the param, for a request
 * the params refuse.
 */
export function newCounter(counterId: string, requested: Requested, settings: Settings, limits: OperationLimits): NewCounter {
  const unique = uniqueFor(counterId, requested.unique, settings.uniquePatterns());
  const windowed = reservedFlag("windowed", "WINDOWED_COUNTERS", counterId, requested.windowed, settings.windowedPatterns());
  const numShards = shardsFor(counterId, requested.numShards, settings.kindFor(counterId, limits)) ?? limits.defaultShards;
  const board = settings.boardFor(counterId);
  return { numShards, unique, windowed, mirrors: settings.mirrorsFor(counterId), ...(board === undefined ? {} : { board }) };
}

/**
 * Whether a new counter is unique: as requested, or, when `unique` is omitted, whether its id matches
 * UNIQUE_COUNTERS. An id that matches can never be plain (`unique: false` is invalid-argument): otherwise
 * anyone could create a post's likes counter as a plain counter first and inflate it with increments.
 */
export function uniqueFor(counterId: string, requested: boolean | undefined, patterns: readonly Template[]): boolean {
  return reservedFlag("unique", "UNIQUE_COUNTERS", counterId, requested, patterns);
}
