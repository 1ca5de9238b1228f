// The shape of a counter that a fold creates (an extension counter's first amount, when no counter has its
// id yet): what createCounter would give that id without a request's choices. DEFAULT_SHARDS, or the
// shards COUNTER_KINDS declares for it; windowed if WINDOWED_COUNTERS names it. An id that UNIQUE_COUNTERS
// reserves is refused: a unique counter counts members, and extension amounts are not members. The
// trigger takes the params as deployed, migrate-extension from the codebase's env files. Pure.
import { kindFor, parseCounterKindRules } from "../counters/kinds";
import { matchesAny, parseCounterIdPatterns } from "../counters/patterns";

export interface NewCounterShape {
  numShards: number;
  windowed: boolean;
}

/** Decides a new counter's shape, or throws an Error saying why no counter may be created with that id. */
export type NewCounterRule = (counterId: string) => NewCounterShape;

/** The params that decide it, as text (an env file's values, or the deployed params). */
export interface NewCounterParams {
  DEFAULT_SHARDS?: string | number;
  MAX_SHARDS?: string | number;
  MAX_DELTA?: string | number;
  UNIQUE_COUNTERS?: string;
  WINDOWED_COUNTERS?: string;
  COUNTER_KINDS?: string;
}

/**
 * The rule the params give (their defaults where one is absent). A pattern param that does not parse
 * throws here, naming it (a COUNTER_KINDS rule that is bad only for some ids throws when one of them is created).
 */
export function newCounterRule(params: NewCounterParams): NewCounterRule {
  const int = (value: string | number | undefined, fallback: number): number => {
    const n = Number(value ?? fallback);
    return Number.isSafeInteger(n) && n >= 1 ? n : fallback;
  };
  const defaultShards = int(params.DEFAULT_SHARDS, 1);
  const limits = { maxShards: int(params.MAX_SHARDS, 200), maxDelta: int(params.MAX_DELTA, 1000) };
  const unique = parseCounterIdPatterns("UNIQUE_COUNTERS", params.UNIQUE_COUNTERS ?? "");
  const windowed = parseCounterIdPatterns("WINDOWED_COUNTERS", params.WINDOWED_COUNTERS ?? "");
  const kinds = parseCounterKindRules("COUNTER_KINDS", params.COUNTER_KINDS ?? "", limits);
  return (counterId) => {
    if (matchesAny(unique, counterId)) {
      throw new Error(`counter "${counterId}" matches UNIQUE_COUNTERS: a unique counter counts members, and extension amounts are not members`);
    }
    return { numShards: kindFor(kinds, counterId)?.shards ?? defaultShards, windowed: matchesAny(windowed, counterId) };
  };
}
