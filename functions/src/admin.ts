// @firestore-exact-counter/functions/admin: the counters' operations for an app's own Cloud Functions and
// scripts, with admin rights and no callable round trip (docs/app.md, "From your own functions"). The same
// validation, param rules (read from this process's environment: config/env.ts), answers and error codes
// as the callables; a refusal throws a CounterError whose `code` is the callable's. Importing it deploys
// nothing: no function, no param, no initializeApp; the default admin app is found (or initialized) on
// the first call, unless the call names an app.
import { getApp, getApps, initializeApp, type App } from "firebase-admin/app";
import { getFirestore, type Firestore } from "firebase-admin/firestore";
import type { z } from "zod";
import { envSettings, type EnvSettings } from "./config/env";
import { CounterError } from "./model/errors";
import * as ops from "./counters/operations";
import { counterOnlyInput, createCounterInput, describeIssue, incrementCounterInput, reshardCounterInput, setMemberInput, type Limits } from "./model/schema";

import type { CreateResult } from "./counters/create";
import type { IncrementResult } from "./counters/increment";
import type { SetMemberResult } from "./counters/members";

export { CounterError, type CounterErrorCode } from "./model/errors";
export type { CreateResult, IncrementResult, SetMemberResult };
export type { Time } from "./model/time";

/** Every call's last argument may name the firebase-admin app to use (default: the default app). */
export interface AdminOptions {
  app?: App;
}

export function createCounter(
  counterId?: string,
  options: AdminOptions & { numShards?: number; unique?: boolean; windowed?: boolean } = {},
): Promise<CreateResult> {
  const args = counterId === undefined ? {} : { counterId };
  return run(options, ["numShards", "unique", "windowed"], createCounterInput, args, (c, input) => ops.createWith(c.db, c.settings, input));
}

export function incrementCounter(counterId: string, delta?: number, options: AdminOptions & { requestId?: string } = {}): Promise<IncrementResult> {
  const args = delta === undefined ? { counterId } : { counterId, delta };
  return run(options, ["requestId"], incrementCounterInput, args, (c, input) => ops.incrementWith(c.db, c.settings, input));
}

export function setMember(counterId: string, uid: string, member: boolean, options: AdminOptions = {}): Promise<SetMemberResult> {
  return run(options, [], setMemberInput, { counterId, member }, (c, input) => {
    if (typeof uid !== "string" || uid === "") throw new CounterError("invalid-argument", "uid must be a non-empty string (the member's Firebase Auth uid)");
    return ops.setMemberWith(c.db, c.settings, input, uid);
  });
}

export function resetCounter(counterId: string, options: AdminOptions = {}): Promise<{ counterId: string }> {
  return run(options, [], counterOnlyInput, { counterId }, (c, input) => ops.resetWith(c.db, c.settings, input.counterId));
}

export function reshardCounter(counterId: string, numShards: number, options: AdminOptions = {}): Promise<{ counterId: string; numShards: number }> {
  return run(options, [], reshardCounterInput, { counterId, numShards }, (c, input) => ops.reshardWith(c.db, input.counterId, input.numShards));
}

export function deleteCounter(counterId: string, options: AdminOptions = {}): Promise<{ counterId: string }> {
  return run(options, [], counterOnlyInput, { counterId }, (c, input) => ops.deleteWith(c.db, c.settings, input.counterId));
}

interface Context {
  db: Firestore;
  settings: EnvSettings;
}

/**
 * One call: the options checked (`app`, and the operation's own `keys`, which join the arguments), the
 * settings read now, the arguments validated by the callable's own schema (the same messages, naming the
 * field), then the operation. Refusals are CounterErrors; anything else is thrown as it is.
 */
async function run<S extends z.ZodType, R>(
  options: unknown,
  keys: readonly string[],
  schema: (limits: Limits) => S,
  args: Record<string, unknown>,
  operation: (context: Context, input: z.infer<S>) => Promise<R>,
): Promise<R> {
  if (typeof options !== "object" || options === null || Array.isArray(options)) throw new CounterError("invalid-argument", "options must be an object");
  const { app, ...rest } = options as Record<string, unknown>;
  const unknown = Object.keys(rest).filter((key) => !keys.includes(key));
  if (unknown.length > 0) {
    const known = ["app", ...keys].join(", ");
    throw new CounterError("invalid-argument", `unknown option ${JSON.stringify(unknown[0]!.slice(0, 32))}: the options are ${known}`);
  }
  if (app !== undefined && !isApp(app)) throw new CounterError("invalid-argument", "options.app must be a firebase-admin App (what initializeApp() returns)");
  const settings = envSettings();
  const parsed = schema(settings.limits()).safeParse({ ...args, ...rest });
  if (!parsed.success) throw new CounterError("invalid-argument", describeIssue(parsed.error));
  const db = getFirestore(app ?? defaultApp(), settings.databaseId());
  return operation({ db, settings }, parsed.data);
}

function isApp(value: unknown): value is App {
  return typeof value === "object" && value !== null && typeof (value as { name?: unknown }).name === "string" && typeof (value as { options?: unknown }).options === "object";
}

/**
 * The app's default app, initialized if it has none yet. Found by name: in the functions emulator
 * getApps() can list an app while the default one does not exist.
 */
function defaultApp(): App {
  return getApps().some((a) => a.name === "[DEFAULT]") ? getApp() : initializeApp();
}
