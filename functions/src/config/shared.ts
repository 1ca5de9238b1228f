// The params that decide what a counter is and what one call may do, which the admin entry (admin.ts) reads
// too, with their defaults, in one place: params.ts declares them with these defaults for the callables, and
// env.ts reads the same names with the same defaults from the environment of an app's own functions and
// scripts. So "the same param rules" holds by construction, and the preflight compares the values an app's
// codebase gives them with the counters codebase's (scripts/lib/preflight/admin.ts). No Firebase import.

export const COUNTER_PARAM_DEFAULTS = {
  DATABASE_ID: "(default)",
  DEFAULT_SHARDS: 1,
  MAX_SHARDS: 200,
  MAX_GROWN_SHARDS: 1000,
  MAX_DELTA: 1000,
  REQUEST_TTL_HOURS: 24,
  UNIQUE_COUNTERS: "",
  WINDOWED_COUNTERS: "",
  COUNTER_KINDS: "",
  MIRRORS: "",
  AUTO_CREATE: "",
} as const;

export type CounterParamName = keyof typeof COUNTER_PARAM_DEFAULTS;

/** The names of the params above, in that order. */
export const COUNTER_PARAM_NAMES = Object.keys(COUNTER_PARAM_DEFAULTS) as CounterParamName[];
