// validatedOnCall: the one place a callable request is checked and the one place HttpsErrors are made.
// The params are read once per call (config/read.ts, deployedSettings): the checks, the publication and the
// handler all take them from the call's settings. Order: the limits and the gate's params → App Check (if
// enforced) → signed-in user (unless allowed anonymous) → admin claim (admin callables) → the callable's
// policy (createCounter: CREATE_POLICY) → the caller's rate limit → zod validation of `data` → (an
// instance's first valid call: the params published for the admin entry, publish-params.ts) → handler.
// Known failures become their callable code; anything else is logged with context and surfaces as
// `internal`.
import { HttpsError, onCall, type CallableFunction, type CallableRequest } from "firebase-functions/v2/https";
import * as logger from "firebase-functions/logger";
import type { z } from "zod";
import { policyRefusal } from "../config/access";
import { consumeAppCheckTokenAtLoad } from "../config/params";
import { deployedSettings } from "../config/read";
import type { CreatePolicy } from "../model/param-rules";
import { CounterError } from "../model/errors";
import { createLimiter, type Limiter } from "../model/ratelimit";
import { describeIssue, type Limits } from "../model/schema";
import type { CallerGate, OperationLimits, Settings } from "../model/settings";
import { EVERY_FUNCTION } from "./options";
import { publishParams } from "./publish-params";

export interface CallContext {
  uid: string | null;
  /** The params as deployed, read once for this call: the handler passes them down. */
  settings: Settings;
}

export interface CallableSpec<S extends z.ZodType, R> {
  name: string;
  /** Builds the input schema from the deployed limits. */
  schema: (limits: Limits) => S;
  /** Requires the custom claim `admin: true`. */
  admin?: boolean;
  /** Requires a signed-in user even when ALLOW_UNAUTHENTICATED is true (setMember: the uid is the data; createCounter). */
  signedIn?: boolean;
  /** Who may call it beyond the auth gate (reads its param from the call's settings; a bad value throws → `internal`). */
  policy?: (settings: Settings) => CreatePolicy;
  /** Subject to the per-caller token bucket (RATE_LIMIT_PER_MINUTE / RATE_LIMIT_BURST). */
  rateLimited?: boolean;
  handler: (input: z.infer<S>, context: CallContext) => Promise<R>;
}

export function validatedOnCall<S extends z.ZodType, R>(spec: CallableSpec<S, R>): CallableFunction<unknown, Promise<R>> {
  return onCall({ ...EVERY_FUNCTION, consumeAppCheckToken: consumeAppCheckTokenAtLoad() }, (request) => handleCall(spec, request));
}

/** This instance's buckets, one limiter per callable and setting (a changed param starts afresh). */
const limiters = new Map<string, Limiter>();

function limiterFor(name: string, gate: CallerGate): Limiter {
  const key = `${name}:${gate.rateLimit.perMinute}:${gate.rateLimit.burst}`;
  let limiter = limiters.get(key);
  if (limiter === undefined) {
    limiter = createLimiter(gate.rateLimit);
    limiters.set(key, limiter);
  }
  return limiter;
}

/** The body of every callable: the checks in the order above, then the handler. */
async function handleCall<S extends z.ZodType, R>(
  spec: CallableSpec<S, R>,
  request: Pick<CallableRequest<unknown>, "data" | "auth" | "app">,
): Promise<R> {
  const uid = request.auth?.uid ?? null;
  const settings = deployedSettings();
  let gate: CallerGate;
  let limits: OperationLimits;
  try {
    limits = settings.limits();
    gate = settings.gate();
  } catch (error) {
    logger.error("callable misconfigured", { callable: spec.name, error: errorText(error) });
    throw new HttpsError("internal", "internal error");
  }

  if (gate.enforceAppCheck && request.app === undefined) {
    throw new HttpsError("unauthenticated", `${spec.name} requires a valid App Check token`);
  }
  if (request.app?.alreadyConsumed === true) {
    // Only set when CONSUME_APP_CHECK_TOKEN made onCall consume tokens: this one was used before.
    throw new HttpsError("unauthenticated", `${spec.name} refuses an App Check token that was already used (replay protection)`);
  }
  if (request.auth === undefined && !(gate.allowUnauthenticated && !spec.admin && !spec.signedIn)) {
    throw new HttpsError("unauthenticated", `${spec.name} requires a signed-in user`);
  }
  if (spec.admin && request.auth?.token?.admin !== true) {
    throw new HttpsError("permission-denied", `${spec.name} requires the custom claim admin: true`);
  }

  if (spec.policy !== undefined) {
    let policy: CreatePolicy;
    try {
      policy = spec.policy(settings);
    } catch (error) {
      logger.error("callable misconfigured", { callable: spec.name, error: errorText(error) });
      throw new HttpsError("internal", "internal error");
    }
    const refusal = policyRefusal(policy, request.auth?.token);
    if (refusal !== undefined) throw new HttpsError("permission-denied", `${spec.name} ${refusal}`);
  }

  // Callers without a user (ALLOW_UNAUTHENTICATED) share one bucket: best-effort means failing closed
  // for them rather than trusting anything they send.
  if (spec.rateLimited && !limiterFor(spec.name, gate).take(uid ?? "(unauthenticated)", Date.now())) {
    throw new HttpsError("resource-exhausted", `${spec.name}: too many calls from this user; try again in a few seconds`);
  }

  if (hasForeignPrototype(request.data)) {
    // The callable decoder assigns keys one by one, so a "__proto__" key in the request body becomes the
    // object's prototype instead of a key zod could see. Refuse it like any other unknown field.
    throw new HttpsError("invalid-argument", 'unknown field "__proto__": not part of this request');
  }
  const schema = spec.schema({ maxShards: limits.maxShards, maxGrownShards: limits.maxGrownShards, maxDelta: limits.maxDelta });
  const parsed = schema.safeParse(request.data);
  if (!parsed.success) throw new HttpsError("invalid-argument", describeIssue(parsed.error, schema));

  await publishParams({ by: spec.name, read: (name) => settings.paramValue(name) });
  try {
    return await spec.handler(parsed.data, { uid, settings });
  } catch (error) {
    if (error instanceof HttpsError) throw error;
    if (error instanceof CounterError) throw new HttpsError(error.code, error.message);
    logger.error(`${spec.name} failed`, { callable: spec.name, uid, input: parsed.data, error: errorText(error) });
    throw new HttpsError("internal", "internal error");
  }
}

function hasForeignPrototype(data: unknown): boolean {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return false;
  const proto: unknown = Object.getPrototypeOf(data);
  return proto !== Object.prototype && proto !== null;
}

function errorText(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
