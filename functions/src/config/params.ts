// Every deploy-time setting of the backend, declared once. A codebase needs a value for each in its .env
// (firebase-tools prompts otherwise, and the emulator waits forever): params.env (the defaults, for apps
// that re-export the package; init writes them with their descriptions) and this repository's
// functions/.env follow these declarations (config/param-list.ts; a unit test holds them to it).
// Override per project in .env.<projectId>.
import { defineBoolean, defineInt, defineString } from "firebase-functions/params";
import { paramAtLoad } from "./at-load";
import { COUNTER_PARAM_DEFAULTS as DEFAULTS } from "./shared";

// 1: a counter starts as cheap as a counter can be (its create writes 2 documents) and grows its shards
// when its load asks for them (docs/growth.md, "Where a counter starts").
export const defaultShards = defineInt("DEFAULT_SHARDS", {
  default: DEFAULTS.DEFAULT_SHARDS,
  description: "Shards given to a counter created without numShards; it grows more under load (docs/growth.md).",
});

export const maxShards = defineInt("MAX_SHARDS", {
  default: DEFAULTS.MAX_SHARDS,
  description: "Largest numShards a counter may have (create and reshard). At most 200 (one batch).",
});

export const shardWritesPerSecond = defineInt("SHARD_WRITES_PER_SECOND", {
  default: 1,
  description:
    "Sustained increments per second one shard should take (Firestore's guidance for one document). A counter " +
    "whose applied increments stay above numShards x this for about 10 s grows its shards (docs/growth.md).",
});

export const maxGrownShards = defineInt("MAX_GROWN_SHARDS", {
  default: DEFAULTS.MAX_GROWN_SHARDS,
  description: "Most shards a counter grows to by itself under load (docs/growth.md).",
});

export const maxDelta = defineInt("MAX_DELTA", {
  default: DEFAULTS.MAX_DELTA,
  description: "Largest |delta| one incrementCounter call may apply.",
});

export const rollupIntervalMs = defineInt("ROLLUP_INTERVAL_MS", {
  default: 1000,
  description: "The rollup writes a counter's parent document at most about once per this many ms.",
});

export const requestTtlHours = defineInt("REQUEST_TTL_HOURS", {
  default: DEFAULTS.REQUEST_TTL_HOURS,
  description: "How long an incrementCounter requestId is remembered (TTL on the idempotency record).",
});

export const allowUnauthenticated = defineBoolean("ALLOW_UNAUTHENTICATED", {
  default: false,
  description: "Accept incrementCounter requests without a signed-in Firebase Auth user (createCounter, setMember and the admin callables always need one).",
});

export const enforceAppCheck = defineBoolean("ENFORCE_APP_CHECK", {
  default: false,
  description: "Reject callable requests without a valid App Check token. Turn on in production.",
});

export const uniqueCounters = defineString("UNIQUE_COUNTERS", {
  default: DEFAULTS.UNIQUE_COUNTERS,
  description:
    "Counter-id patterns, comma-separated, with one optional {name} placeholder (e.g. post-{id}-likes): every " +
    "counter whose id matches is a unique counter (setMember only); createCounter refuses unique: false for it.",
});

export const windowedCounters = defineString("WINDOWED_COUNTERS", {
  default: DEFAULTS.WINDOWED_COUNTERS,
  description:
    "Counter-id patterns, comma-separated, with one optional {name} placeholder (e.g. post-{id}-views): every " +
    "counter whose id matches keeps counts per UTC day (windows.today, last7Days, last30Days); createCounter refuses windowed: false for it.",
});

export const mirrors = defineString("MIRRORS", {
  default: DEFAULTS.MIRRORS,
  description:
    "Where counters' totals are also written, on the app's own documents: rules COUNTER_ID_PATTERN=" +
    "DOCUMENT_PATH_PATTERN:FIELD_PATH, comma-separated, one optional {name} placeholder used on both sides " +
    "(e.g. post-{id}-likes=posts/{id}:likeCount). A target document is never created.",
});

export const counterKinds = defineString("COUNTER_KINDS", {
  default: DEFAULTS.COUNTER_KINDS,
  description:
    "Shapes the server declares for counter ids, so clients cannot choose them: rules ID_PATTERN=SPEC, " +
    "comma-separated, SPEC being shards:N and/or maxDelta:N separated by ; (e.g. post-{id}-likes=shards:20," +
    "post-{id}-views=shards:50;maxDelta:1). The first matching rule applies; reshardCounter is not bound by it.",
});

export const extensionCounters = defineString("EXTENSION_COUNTERS", {
  default: "",
  description:
    "Old app versions of the firestore-counter extension keep counting: rules DOCUMENT_PATTERN:FIELD=ID_PATTERN, " +
    "comma-separated, one optional {name} placeholder on both sides (e.g. pages/{id}:visits=page-{id}-visits), documents " +
    "of top-level collections. Non-empty: the trigger foldExtensionShards is deployed and folds every write of their " +
    "_counter_shards_ into those counters (docs/from-the-extension.md). Set it only once the extension is uninstalled.",
});

/**
 * Whether foldExtensionShards is deployed: EXTENSION_COUNTERS is not empty when the module loads. A
 * function's existence cannot wait for it to run, so this is read at load, from the environment or, while
 * firebase-tools reads the manifest, from the codebase's .env files (at-load.ts): so the main entry
 * exports exactly the contract's functions unless the param names extension counters.
 */
export function extensionCountersAtLoad(): boolean {
  return (paramAtLoad("EXTENSION_COUNTERS") ?? "").trim() !== "";
}

export const autoCreate = defineString("AUTO_CREATE", {
  default: DEFAULTS.AUTO_CREATE,
  description:
    "Counters that create themselves: rules ID_PATTERN=DOCUMENT_PATTERN, comma-separated, one optional {name} " +
    "placeholder used on both sides (e.g. post-{id}-likes=posts/{id}). The first incrementCounter or setMember on a " +
    "missing counter whose id matches creates it, as createCounter would, if and only if that document exists.",
});

// The deploy default is the strictest policy: a counter costs shards and rollup events from the moment it
// exists, so who may create them is opened up on purpose, not by accident (docs/security.md).
export const createPolicy = defineString("CREATE_POLICY", {
  default: "admin",
  description:
    "Who may call createCounter: signed-in (any signed-in user, anonymous included), non-anonymous (a " +
    "provider other than anonymous) or admin (custom claim admin: true).",
});

// Best-effort abuse limits (model/ratelimit.ts, docs/abuse.md): a token bucket per caller in each
// instance's memory, on createCounter, incrementCounter and setMember. No Firestore cost per call.
export const rateLimitPerMinute = defineInt("RATE_LIMIT_PER_MINUTE", {
  default: 300,
  description:
    "Calls per minute one caller (uid) may make to createCounter, incrementCounter and setMember, per " +
    "function instance (0: no limit). Beyond it: resource-exhausted.",
});

export const rateLimitBurst = defineInt("RATE_LIMIT_BURST", {
  default: 60,
  description: "Calls one idle caller may make at once before RATE_LIMIT_PER_MINUTE applies (bucket size).",
});

/**
 * App Check replay protection: every callable consumes the caller's App Check token, and a token used
 * before is refused. Read from the environment when the module loads (onCall's consumeAppCheckToken
 * option took only a literal before firebase-functions 7; 7.x also takes the param); firebase-tools puts functions/.env's values
 * into the environment both when it reads the deploy manifest and when an instance starts, so the option
 * and the check in entry/oncall.ts see the same value. Declared as a param so the preflight checks it.
 */
export const consumeAppCheckToken = defineBoolean("CONSUME_APP_CHECK_TOKEN", {
  default: false,
  description:
    "Consume App Check tokens (replay protection): a token may be used for one call only. Clients must " +
    "request limited-use tokens (limitedUseAppCheckTokens: true). Needs ENFORCE_APP_CHECK=true.",
});

export function consumeAppCheckTokenAtLoad(): boolean {
  return process.env.CONSUME_APP_CHECK_TOKEN === "true";
}

export const maxInstances = defineInt("MAX_INSTANCES", {
  default: 100,
  description: "Upper bound on instances per function (cost cap).",
});

// Deploy-time placement and sizing. They are read by the platform from the deploy manifest, never by
// our code at run time (except DATABASE_ID), and `npm run preflight` checks them before a deploy.

export const region = defineString("REGION", {
  default: "us-central1",
  description:
    "Region of every function. The Firestore trigger must run in its database's location: nam5 -> " +
    "us-central1, eur3 -> europe-west1, a regional database -> that region (firebase.json firestore.location).",
});

export const databaseId = defineString("DATABASE_ID", {
  default: DEFAULTS.DATABASE_ID,
  description: "Firestore database the counters live in; must match firebase.json firestore.database.",
});

export const rollupTimeoutSeconds = defineInt("ROLLUP_TIMEOUT_SECONDS", {
  default: 60,
  description: "Timeout of one rollupTotal invocation (a claimer waits up to one rollup interval, then sums).",
});

export const rollupMemoryMb = defineInt("ROLLUP_MEMORY_MB", {
  default: 256,
  description: "Memory of a rollupTotal instance in MB (128, 256, 512, 1024, 2048, 4096, ...).",
});

export const rollupConcurrency = defineInt("ROLLUP_CONCURRENCY", {
  default: 80,
  description:
    "Events one rollupTotal instance handles at once. A waiting claimer holds one of these slots, so " +
    "MAX_INSTANCES x ROLLUP_CONCURRENCY bounds how many counters can roll up at the same moment.",
});

export const rollupMinInstances = defineInt("ROLLUP_MIN_INSTANCES", {
  default: 0,
  description:
    "rollupTotal instances kept warm even when idle: removes the cold start from the first like after idle " +
    "time, billed around the clock (docs/deploying.md). 0: scale to zero.",
});

/** CPUs of a rollupTotal instance. Not a param: firebase-functions takes only a literal here, and
 * concurrency above 1 needs at least one full CPU. */
export const ROLLUP_CPU = 1;
