// The six counter operations of the admin entry: the callables' validation (their own zod schemas, the
// same messages naming the field), param rules (read from this process's environment:
// model/env-settings.ts, compared with the counters codebase's as deployed before anything is written:
// params-check.ts), answers and error codes, with admin rights and no callable round trip.
import { getFirestore, type Firestore } from "firebase-admin/firestore";
import type { z } from "zod";
import { envSettings } from "../model/env-settings";
import type { Settings } from "../model/settings";
import { CounterError } from "../model/errors";
import * as ops from "../counters/operations";
import { redistributeShards } from "../counters/reshard";
import { counterOnlyInput, createCounterInput, describeIssue, incrementCounterInput, reshardCounterInput, setMemberInput, type Limits } from "../model/schema";
import type { CreateResult } from "../counters/create";
import type { IncrementResult } from "../counters/increment";
import type { SetMemberResult } from "../counters/members";
import { appOf, checkedOptions, type AdminOptions } from "./options";
import { checkDeployedParams } from "./params-check";

export function createCounter(
  counterId?: string,
  options: AdminOptions & { numShards?: number; unique?: boolean; windowed?: boolean } = {},
): Promise<CreateResult> {
  const args = counterId === undefined ? {} : { counterId };
  return run(options, ["numShards", "unique", "windowed"], createCounterInput, args, (c, input) => ops.ruledCreate(c.db, c.settings, input));
}

export function incrementCounter(counterId: string, delta?: number, options: AdminOptions & { requestId?: string } = {}): Promise<IncrementResult> {
  const args = delta === undefined ? { counterId } : { counterId, delta };
  return run(options, ["requestId"], incrementCounterInput, args, (c, input) => ops.ruledIncrement(c.db, c.settings, input));
}

export function setMember(counterId: string, uid: string, member: boolean, options: AdminOptions = {}): Promise<SetMemberResult> {
  return run(options, [], setMemberInput, { counterId, member }, (c, input) => {
    if (typeof uid !== "string" || uid === "") throw new CounterError("invalid-argument", "uid must be a non-empty string (the member's Firebase Auth uid)");
    return ops.ruledSetMember(c.db, c.settings, input, uid);
  });
}

export function resetCounter(counterId: string, options: AdminOptions = {}): Promise<{ counterId: string }> {
  return run(options, [], counterOnlyInput, { counterId }, (c, input) => ops.ruledReset(c.db, c.settings, input.counterId));
}

export function reshardCounter(counterId: string, numShards: number, options: AdminOptions = {}): Promise<{ counterId: string; numShards: number }> {
  return run(options, [], reshardCounterInput, { counterId, numShards }, (c, input) => redistributeShards(c.db, input.counterId, input.numShards));
}

export function deleteCounter(counterId: string, options: AdminOptions = {}): Promise<{ counterId: string }> {
  return run(options, [], counterOnlyInput, { counterId }, (c, input) => ops.ruledDelete(c.db, c.settings, input.counterId));
}

interface Context {
  db: Firestore;
  settings: Settings;
}

/**
 * One call: the options checked (`app`, and the operation's own `keys`, which join the arguments), the
 * settings read now, the arguments validated by the callable's own schema (the same messages, naming the
 * field), the settings compared with the deployed ones (params-check.ts), then the operation. Refusals are CounterErrors; anything else is thrown as it is.
 */
async function run<S extends z.ZodType, R>(
  options: unknown,
  keys: readonly string[],
  schema: (limits: Limits) => S,
  args: Record<string, unknown>,
  operation: (context: Context, input: z.infer<S>) => Promise<R>,
): Promise<R> {
  const { app, ...rest } = checkedOptions(options, keys);
  const settings = envSettings();
  const validate = schema(settings.limits());
  const parsed = validate.safeParse({ ...args, ...rest });
  if (!parsed.success) throw new CounterError("invalid-argument", describeIssue(parsed.error, validate));
  const on = appOf(app);
  const databaseId = settings.databaseId();
  await checkDeployedParams(on, databaseId, settings, "this process's environment");
  return operation({ db: getFirestore(on, databaseId), settings }, parsed.data);
}
