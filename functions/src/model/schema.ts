// The shapes that cross a boundary: callable request data (validated with zod, every message naming its
// field and never echoing the value) and the stored counter document.
import { z } from "zod";
import { resembles } from "./near-names";

/** counterId and requestId: 1–128 characters of [A-Za-z0-9_-] (docs/api.md). */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Bounds that come from params, so schemas are built per request with the deployed values. */
export interface Limits {
  /** MAX_SHARDS: what createCounter may be asked for. */
  maxShards: number;
  /** MAX_GROWN_SHARDS: what reshardCounter (admin) may go up to, as far as counters grow by themselves. */
  maxGrownShards: number;
  maxDelta: number;
}

function idField(name: string) {
  return z
    .string({ error: `${name} must be a string` })
    .regex(ID_PATTERN, { error: `${name} must be 1-128 characters of A-Z, a-z, 0-9, _ or -` });
}

function intField(name: string, min: number, max: number, extra = "") {
  const range = `${name} must be an integer from ${min} to ${max}${extra}`;
  return z
    .number({ error: `${name} must be a number` })
    .int({ error: range })
    .min(min, { error: range })
    .max(max, { error: range });
}

function deltaField(maxDelta: number) {
  const range = `delta must be a non-zero integer from -${maxDelta} to ${maxDelta}`;
  return z
    .number({ error: "delta must be a number" })
    .int({ error: range })
    .min(-maxDelta, { error: range })
    .max(maxDelta, { error: range })
    .refine((d) => d !== 0, { error: range });
}

/** Request objects reject unknown keys: a typo must fail loudly, not be ignored. */
function request<T extends z.ZodRawShape>(shape: T) {
  return z.strictObject(shape, { error: "data must be an object" });
}

function booleanField(name: string) {
  return z.boolean({ error: `${name} must be a boolean` });
}

export function createCounterInput(limits: Limits) {
  return request({
    counterId: idField("counterId").optional(),
    numShards: intField("numShards", 1, limits.maxShards).optional(),
    unique: booleanField("unique").optional(),
    windowed: booleanField("windowed").optional(),
  });
}

export function setMemberInput() {
  return request({
    counterId: idField("counterId"),
    member: booleanField("member"),
  });
}

export function incrementCounterInput(limits: Limits) {
  return request({
    counterId: idField("counterId"),
    delta: deltaField(limits.maxDelta).optional(),
    requestId: idField("requestId").optional(),
  });
}

export function counterOnlyInput() {
  return request({ counterId: idField("counterId") });
}

export function reshardCounterInput(limits: Limits) {
  return request({
    counterId: idField("counterId"),
    numShards: intField("numShards", 1, limits.maxGrownShards),
  });
}

/** The fixed part of a stored counter parent (docs/api.md, "Data model"); bookkeeping lives under `rollup`. */
export const storedCounter = z.object({
  numShards: z.int().min(1),
  total: z.number(),
  /** Absent: plain (docs/api.md; parents written outside createCounter, such as the benchmark's, carry none). */
  unique: z.boolean().optional(),
  /** Absent: not windowed (docs/windows.md). */
  windowed: z.boolean().optional(),
});

const MAX_KEY_CHARS = 32;

/**
 * One short, field-naming sentence for what zod found. An unknown field comes first, with the field it
 * resembles when `schema` has one (a `counterID` also makes `counterId` missing: the typo is the cause).
 * Values are never echoed.
 */
export function describeIssue(error: z.ZodError, schema?: z.ZodType): string {
  const unknown = error.issues.find((i) => i.code === "unrecognized_keys");
  if (unknown !== undefined) return unknownFields(unknown.keys, schema instanceof z.ZodObject ? Object.keys(schema.shape) : []);
  const issue = error.issues[0];
  if (issue === undefined) return "data is invalid";
  const field = issue.path.map(String).join(".");
  if (field === "") return issue.message;
  // Our messages start with the field name; zod's built-in ones (rare) get it prefixed.
  return issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}`;
}

/** `unknown field "counterID" (did you mean "counterId"?)`, or `unknown field "x": not part of this request` when none of `known` resembles it. */
function unknownFields(keys: readonly string[], known: readonly string[]): string {
  const hints = keys.map((key) => resembles(key, known));
  const named = keys.map((key, i) => `${JSON.stringify(key.slice(0, MAX_KEY_CHARS))}${hints[i] === undefined ? "" : ` (did you mean ${JSON.stringify(hints[i])}?)`}`);
  const tail = hints.some((hint) => hint !== undefined) ? "" : ": not part of this request";
  return `unknown field${keys.length > 1 ? "s" : ""} ${named.join(", ")}${tail}`;
}
