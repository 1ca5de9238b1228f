// Every deploy-time setting of the backend as plain data, in declaration order: its name, kind, default
// and description. config/params.ts declares each one to firebase-functions from this table (so what
// firebase-tools reads is this), and the tools read it from here: params.env (the package's defaults, one
// NAME=value line each), the .env that `firestore-exact-counter init` writes (each line under its
// description) and the preflight's defaults. A unit test holds the declarations, params.env and this
// repository's functions/.env to it. Pure: no Firebase import.

/** The params that decide what a counter is and what one call may do, with their defaults: the callables
 * read them as params, and the admin entry reads the same names with the same defaults from the environment
 * of an app's own code (functions/src/model/env-settings.ts), so "the same param rules" holds by construction. */
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
  EXTENSION_COUNTERS: "",
  DOCUMENT_COUNTERS: "",
  LEADERBOARDS: "",
} as const;

export type CounterParamName = keyof typeof COUNTER_PARAM_DEFAULTS;

/** The names of the params above, in that order. */
export const COUNTER_PARAM_NAMES = Object.keys(COUNTER_PARAM_DEFAULTS) as CounterParamName[];

const COUNTER_DEFAULTS = COUNTER_PARAM_DEFAULTS;

/** One param: its kind (firebase-functions' defineInt, defineBoolean or defineString), default and description. */
export type ParamDeclaration =
  | { kind: "int"; default: number; description: string }
  | { kind: "boolean"; default: boolean; description: string }
  | { kind: "string"; default: string; description: string };

export const PARAMS = {
  // 1: a counter starts as cheap as a counter can be (its create writes 2 documents) and grows its shards
  // when its load asks for them (docs/growth.md, "Where a counter starts").
  DEFAULT_SHARDS: {
    kind: "int",
    default: COUNTER_DEFAULTS.DEFAULT_SHARDS,
    description: "Shards given to a counter created without numShards; it grows more under load (docs/growth.md).",
  },
  MAX_SHARDS: {
    kind: "int",
    default: COUNTER_DEFAULTS.MAX_SHARDS,
    description: "Largest numShards a counter may have (create and reshard). At most 200 (one batch).",
  },
  SHARD_WRITES_PER_SECOND: {
    kind: "int",
    default: 1,
    description:
      "Sustained increments per second one shard should take (Firestore's guidance for one document). A counter " +
      "whose applied increments stay above numShards x this for about 10 s grows its shards (docs/growth.md).",
  },
  MAX_GROWN_SHARDS: {
    kind: "int",
    default: COUNTER_DEFAULTS.MAX_GROWN_SHARDS,
    description: "Most shards a counter grows to by itself under load (docs/growth.md).",
  },
  MAX_DELTA: {
    kind: "int",
    default: COUNTER_DEFAULTS.MAX_DELTA,
    description: "Largest |delta| one incrementCounter call may apply.",
  },
  ROLLUP_INTERVAL_MS: {
    kind: "int",
    default: 1000,
    description: "The rollup writes a counter's parent document at most about once per this many ms.",
  },
  REQUEST_TTL_HOURS: {
    kind: "int",
    default: COUNTER_DEFAULTS.REQUEST_TTL_HOURS,
    description: "How long an incrementCounter requestId is remembered (TTL on the idempotency record).",
  },
  ALLOW_UNAUTHENTICATED: {
    kind: "boolean",
    default: false,
    description:
      "Accept incrementCounter requests without a signed-in Firebase Auth user (createCounter, setMember and the admin callables always need one).",
  },
  ENFORCE_APP_CHECK: {
    kind: "boolean",
    default: false,
    description: "Reject callable requests without a valid App Check token. Turn on in production.",
  },
  UNIQUE_COUNTERS: {
    kind: "string",
    default: COUNTER_DEFAULTS.UNIQUE_COUNTERS,
    description:
      "Counter-id patterns, comma-separated, with one optional {name} placeholder (e.g. post-{id}-likes): every " +
      "counter whose id matches is a unique counter (setMember only); createCounter refuses unique: false for it.",
  },
  WINDOWED_COUNTERS: {
    kind: "string",
    default: COUNTER_DEFAULTS.WINDOWED_COUNTERS,
    description:
      "Counter-id patterns, comma-separated, with one optional {name} placeholder (e.g. post-{id}-views): every " +
      "counter whose id matches keeps counts per UTC day (windows.today, last7Days, last30Days); createCounter refuses windowed: false for it.",
  },
  MIRRORS: {
    kind: "string",
    default: COUNTER_DEFAULTS.MIRRORS,
    description:
      "Where counters' totals are also written, on the app's own documents: rules COUNTER_ID_PATTERN=" +
      "DOCUMENT_PATH_PATTERN:FIELD_PATH, comma-separated, one optional {name} placeholder used on both sides " +
      "(e.g. post-{id}-likes=posts/{id}:likeCount). A target document is never created.",
  },
  COUNTER_KINDS: {
    kind: "string",
    default: COUNTER_DEFAULTS.COUNTER_KINDS,
    description:
      "Shapes the server declares for counter ids, so clients cannot choose them: rules ID_PATTERN=SPEC, " +
      "comma-separated, SPEC being shards:N, maxDelta:N and callers:add|none separated by ; (e.g. post-{id}-likes=shards:20," +
      "post-{id}-views=shards:50;maxDelta:1;callers:add). callers:add lets the callables only add; callers:none leaves " +
      "creating and moving the counter to the app's own functions (the admin entry). The first matching rule applies; " +
      "reshardCounter is not bound by it.",
  },
  EXTENSION_COUNTERS: {
    kind: "string",
    default: COUNTER_DEFAULTS.EXTENSION_COUNTERS,
    description:
      "Old app versions of the firestore-counter extension keep counting: rules DOCUMENT_PATTERN:FIELD=ID_PATTERN, " +
      "comma-separated, one optional {name} placeholder on both sides (e.g. pages/{id}:visits=page-{id}-visits), documents " +
      "of top-level collections. Non-empty: the trigger foldExtensionShards is deployed and folds every write of their " +
      "_counter_shards_ into those counters (docs/from-the-extension.md). Set it only once the extension is uninstalled.",
  },
  AUTO_CREATE: {
    kind: "string",
    default: COUNTER_DEFAULTS.AUTO_CREATE,
    description:
      "Counters that create themselves: rules ID_PATTERN=DOCUMENT_PATTERN, comma-separated, one optional {name} " +
      "placeholder used on both sides (e.g. post-{id}-likes=posts/{id}). The first incrementCounter or setMember on a " +
      "missing counter whose id matches creates it, as createCounter would, if and only if that document exists.",
  },
  RECOUNT_LIMIT: {
    kind: "int",
    default: 10000,
    description:
      "The most documents a document counter is kept by recounting them (a count() that reads at most this many index entries, one read per " +
      "1,000); one more and it moves to records by itself, for good (docs/documents.md).",
  },
  DOCUMENT_COUNTERS: {
    kind: "string",
    default: COUNTER_DEFAULTS.DOCUMENT_COUNTERS,
    description:
      "Counters of the app's own documents, exact and live: rules DOCUMENT_PATTERN[FIELD==VALUE]...[:FIELD]=ID_PATTERN, comma-separated " +
      "(e.g. posts/{post}/comments/{comment}=post-{post}-comments,posts/{post}/comments/{c}[status==published]=post-{post}-published). " +
      "A document counts 1 (or adds its integer FIELD) while it exists and every condition holds. Non-empty: one trigger per document " +
      "pattern is deployed (documentCounters-...), and nothing else may move those counters. Existing documents: firestore-exact-counter " +
      "backfill (docs/documents.md).",
  },
  LEADERBOARDS: {
    kind: "string",
    default: COUNTER_DEFAULTS.LEADERBOARDS,
    description:
      "Leaderboards: rules BOARD=COUNTER_ID_PATTERN, comma-separated (e.g. points=user-{uid}-points). A counter whose id " +
      "matches is on that board, and an exact, live rank of it costs 2 document reads and one count() (docs/leaderboards.md). " +
      "Non-empty: the trigger rollupBoard is deployed. Counters that existed before a rule: firestore-exact-counter backfill --board.",
  },
  // The deploy default is the strictest policy: a counter costs shards and rollup events from the moment it
  // exists, so who may create them is opened up on purpose, not by accident (docs/security.md).
  CREATE_POLICY: {
    kind: "string",
    default: "admin",
    description:
      "Who may call createCounter: signed-in (any signed-in user, anonymous included), non-anonymous (a " +
      "provider other than anonymous) or admin (custom claim admin: true).",
  },
  // Best-effort abuse limits (model/ratelimit.ts, docs/abuse.md): a token bucket per caller in each
  // instance's memory, on createCounter, incrementCounter and setMember. No Firestore cost per call.
  RATE_LIMIT_PER_MINUTE: {
    kind: "int",
    default: 300,
    description:
      "Calls per minute one caller (uid) may make to createCounter, incrementCounter and setMember, per " +
      "function instance (0: no limit). Beyond it: resource-exhausted.",
  },
  RATE_LIMIT_BURST: {
    kind: "int",
    default: 60,
    description: "Calls one idle caller may make at once before RATE_LIMIT_PER_MINUTE applies (bucket size).",
  },
  // App Check replay protection (entry/oncall.ts reads it when the module loads: config/params.ts).
  CONSUME_APP_CHECK_TOKEN: {
    kind: "boolean",
    default: false,
    description:
      "Consume App Check tokens (replay protection): a token may be used for one call only. Clients must " +
      "request limited-use tokens (limitedUseAppCheckTokens: true). Needs ENFORCE_APP_CHECK=true.",
  },
  MAX_INSTANCES: {
    kind: "int",
    default: 100,
    description: "Upper bound on instances per function (cost cap).",
  },
  REGION: {
    kind: "string",
    default: "us-central1",
    description:
      "Region of every function. The Firestore trigger must run in its database's location: nam5 -> " +
      "us-central1, eur3 -> europe-west1, a regional database -> that region (firebase.json firestore.location).",
  },
  DATABASE_ID: {
    kind: "string",
    default: COUNTER_DEFAULTS.DATABASE_ID,
    description: "Firestore database the counters live in; must match firebase.json firestore.database.",
  },
  ROLLUP_TIMEOUT_SECONDS: {
    kind: "int",
    default: 60,
    description: "Timeout of one rollupTotal invocation (a busy counter's owner carries its chain, a commit an interval, for up to this less one interval and 10 s, then hands over).",
  },
  ROLLUP_MEMORY_MB: {
    kind: "int",
    default: 256,
    description: "Memory of a rollupTotal instance in MB (128, 256, 512, 1024, 2048, 4096, ...).",
  },
  ROLLUP_CONCURRENCY: {
    kind: "int",
    default: 80,
    description:
      "Events one rollupTotal instance handles at once. A busy counter's owner holds one of these while it waits, so " +
      "MAX_INSTANCES x ROLLUP_CONCURRENCY bounds how many counters can roll up at the same moment.",
  },
  ROLLUP_MIN_INSTANCES: {
    kind: "int",
    default: 0,
    description:
      "rollupTotal instances kept warm even when idle: removes the cold start from the first like after idle " +
      "time, billed around the clock (docs/deploying.md). 0: scale to zero.",
  },
} as const satisfies Record<string, ParamDeclaration>;

export type ParamName = keyof typeof PARAMS;

/** One param as the tools use it: its default as .env text ("" for an empty string). */
export interface ParamInfo {
  name: string;
  type: ParamDeclaration["kind"];
  default: string;
  description: string;
}

/** Every param, in declaration order. */
export function paramList(): ParamInfo[] {
  return Object.entries(PARAMS as Record<string, ParamDeclaration>).map(([name, p]) => ({ name, type: p.kind, default: String(p.default), description: p.description }));
}

/** params.env: every param with its default, one NAME=value line each. */
export function paramsEnv(list: ParamInfo[] = paramList()): string {
  return list.map((p) => `${p.name}=${p.default}\n`).join("");
}
