// What the counter operations (counters/operations.ts) read of the params, behind one interface with two readers:
// the callables' (config/read.ts: firebase-functions params in the counters codebase) and the admin
// entry's (functions/src/model/env-settings.ts: the same names from the environment of an app's own code). Every part is read
// only when an operation needs it, so a bad value stops only the operations that use it. Also, pure, the
// shape a new counter gets from them: createCounter, the admin entry and AUTO_CREATE all make it here.
import type { AutoCreateTarget } from "./auto-create-rules";
import type { ExtensionSource } from "./extension-rules";
import { shardsFor, type CounterKind, type KindLimits } from "./kinds";
import type { MirrorTarget } from "./mirror-rules";
import { reservedFlag, type Template } from "./patterns";
import type { Limits } from "./schema";

/** The bounds of one call: the schemas' limits, DEFAULT_SHARDS and the idempotency records' lifetime. */
export interface OperationLimits extends Limits {
  defaultShards: number;
  requestTtlMs: number;
}

/** The params an operation's limits come from, as numbers already held to their ranges (param-rules.ts). */
export interface LimitParams {
  DEFAULT_SHARDS: number;
  MAX_SHARDS: number;
  MAX_GROWN_SHARDS: number;
  MAX_DELTA: number;
  REQUEST_TTL_HOURS: number;
}

/** An operation's limits from those params: one mapping for the callables (config/read.ts) and the admin entry (env-settings.ts). */
export function operationLimits(values: LimitParams): OperationLimits {
  return {
    defaultShards: values.DEFAULT_SHARDS,
    maxShards: values.MAX_SHARDS,
    maxGrownShards: values.MAX_GROWN_SHARDS,
    maxDelta: values.MAX_DELTA,
    requestTtlMs: values.REQUEST_TTL_HOURS * 3_600_000,
  };
}

export interface CounterSettings {
  /** DEFAULT_SHARDS, MAX_SHARDS, MAX_GROWN_SHARDS, MAX_DELTA, REQUEST_TTL_HOURS; throws naming a bad one. */
  limits(): OperationLimits;
  /** UNIQUE_COUNTERS. */
  uniquePatterns(): Template[];
  /** WINDOWED_COUNTERS. */
  windowedPatterns(): Template[];
  /** The COUNTER_KINDS rule `counterId` matches first (throws for ids a bad rule could match). */
  kindFor(counterId: string, limits: KindLimits): CounterKind | undefined;
  /** Where MIRRORS writes `counterId`'s total and windows. */
  mirrorsFor(counterId: string): MirrorTarget[];
  /** The app document (and the conditions on it) that lets a missing `counterId` create itself on its first call (AUTO_CREATE), if a rule matches. */
  autoCreateFor(counterId: string): AutoCreateTarget | undefined;
  /** The firestore-counter extension's fields whose count moves to `counterId` (EXTENSION_COUNTERS): what its creation takes over. */
  extensionSourcesFor(counterId: string): ExtensionSource[];
  /** The DOCUMENT_COUNTERS rule that names `counterId`, if any (as written): only its documents move that counter. */
  documentRuleFor(counterId: string): string | undefined;
}

/** What the callables read besides: the kind whose callers decides what a client may do (kinds.ts, callersKindFor). */
export interface ClientSettings extends CounterSettings {
  callersKindFor(counterId: string, limits: KindLimits): CounterKind | undefined;
}

/** What a counter is created as. */
export interface NewCounter {
  numShards: number;
  unique: boolean;
  windowed: boolean;
  mirrors: MirrorTarget[];
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
 * otherwise; MIRRORS its targets). Throws invalid-argument, naming the field and the param, for a request
 * the params refuse.
 */
export function newCounter(counterId: string, requested: Requested, settings: CounterSettings, limits: OperationLimits): NewCounter {
  const unique = uniqueFor(counterId, requested.unique, settings.uniquePatterns());
  const windowed = reservedFlag("windowed", "WINDOWED_COUNTERS", counterId, requested.windowed, settings.windowedPatterns());
  const numShards = shardsFor(counterId, requested.numShards, settings.kindFor(counterId, limits)) ?? limits.defaultShards;
  return { numShards, unique, windowed, mirrors: settings.mirrorsFor(counterId) };
}

/**
 * Whether a new counter is unique: as requested, or, when `unique` is omitted, whether its id matches
 * UNIQUE_COUNTERS. An id that matches can never be plain (`unique: false` is invalid-argument): otherwise
 * anyone could create a post's likes counter as a plain counter first and inflate it with increments.
 */
export function uniqueFor(counterId: string, requested: boolean | undefined, patterns: readonly Template[]): boolean {
  return reservedFlag("unique", "UNIQUE_COUNTERS", counterId, requested, patterns);
}
