// Every deploy-time setting of the backend, declared once. Values live in functions/.env (committed,
// no secrets) so that the emulator never prompts for one; override per project in .env.<projectId>.
import { defineBoolean, defineInt } from "firebase-functions/params";

export const defaultShards = defineInt("DEFAULT_SHARDS", {
  default: 10,
  description: "Shards given to a counter created without numShards.",
});

export const maxShards = defineInt("MAX_SHARDS", {
  default: 200,
  description: "Largest numShards a counter may have (create and reshard). At most 200 (one batch).",
});

export const maxDelta = defineInt("MAX_DELTA", {
  default: 1000,
  description: "Largest |delta| one incrementCounter call may apply.",
});

export const rollupIntervalMs = defineInt("ROLLUP_INTERVAL_MS", {
  default: 1000,
  description: "The rollup writes a counter's parent document at most about once per this many ms.",
});

export const requestTtlHours = defineInt("REQUEST_TTL_HOURS", {
  default: 24,
  description: "How long an incrementCounter requestId is remembered (TTL on the idempotency record).",
});

export const allowUnauthenticated = defineBoolean("ALLOW_UNAUTHENTICATED", {
  default: false,
  description: "Accept callable requests without a signed-in Firebase Auth user.",
});

export const enforceAppCheck = defineBoolean("ENFORCE_APP_CHECK", {
  default: false,
  description: "Reject callable requests without a valid App Check token. Turn on in production.",
});

export const maxInstances = defineInt("MAX_INSTANCES", {
  default: 100,
  description: "Upper bound on instances per function (cost cap).",
});
