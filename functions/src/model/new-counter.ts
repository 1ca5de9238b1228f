// The shape of a counter that a fold creates (an extension counter's first amount, or a document counter's
// first counted document, when no counter has its id yet): what createCounter gives that id without a request's choices (model/settings.ts, newCounter:
// DEFAULT_SHARDS or the shards COUNTER_KINDS declares, windowed if WINDOWED_COUNTERS names it). An id that
// UNIQUE_COUNTERS reserves is refused: a unique counter counts members, and extension amounts are not
// members. The trigger reads the params as deployed (config/read.ts), migrate-extension the codebase's env
// files (functions/src/model/env-settings.ts reads them as the admin entry reads its environment). Pure.
import { envSettings } from "./env-settings";
import { newCounter, type Settings } from "./settings";

export interface NewCounterShape {
  numShards: number;
  windowed: boolean;
  /** The leaderboard it is created on (LEADERBOARDS), if any. */
  board?: string;
}

/** Decides a new counter's shape, or throws an Error saying why no counter may be created with that id. */
export type NewCounterRule = (counterId: string) => NewCounterShape;

/** The params that decide it, as text (an env file's values); a param absent has its default. */
export type NewCounterParams = Record<string, string | undefined>;

/**
 * The rule the settings give. A limit out of range or a pattern param that does not parse throws here,
 * naming it (a COUNTER_KINDS rule that is bad only for some ids throws when one of them is created).
 */
export function newCounterRule(settings: Settings, what = "extension amounts"): NewCounterRule {
  const limits = settings.limits();
  settings.uniquePatterns();
  settings.windowedPatterns();
  return (counterId) => {
    const counter = newCounter(counterId, {}, settings, limits);
    if (counter.unique) {
      throw new Error(`counter "${counterId}" matches UNIQUE_COUNTERS: a unique counter counts members, and ${what} are not members`);
    }
    return { numShards: counter.numShards, windowed: counter.windowed, ...(counter.board === undefined ? {} : { board: counter.board }) };
  };
}

/** The rule of params given as text, as an env file holds them. */
export function newCounterRuleOf(params: NewCounterParams, what?: string): NewCounterRule {
  return newCounterRule(envSettings(params), what);
}
