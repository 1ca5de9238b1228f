import { type z } from "zod";
import { createCounterInput, describeIssue, incrementCounterInput, reshardCounterInput, setMemberInput } from "../src/model/schema";
import { resembles } from "../src/model/near-names";

const limits = { maxShards: 200, maxGrownShards: 1000, maxDelta: 1000 };

function message(schema: z.ZodType, data: unknown): string {
  const result = schema.safeParse(data);
  if (result.success) throw new Error("expected a validation error");
  return describeIssue(result.error, schema);
}

describe("describeIssue", () => {
  it("names an unknown field, truncating a long name", () => {
    expect(message(incrementCounterInput(limits), { counterId: "a", ["x".repeat(100)]: 1 })).toBe(
      `unknown field "${"x".repeat(32)}": not part of this request`,
    );
  });

  it("names a typo as unknown, with the field it resembles, rather than the field it left missing", () => {
    expect(message(incrementCounterInput(limits), { counterID: "post-1-likes" })).toBe('unknown field "counterID" (did you mean "counterId"?)');
    expect(message(incrementCounterInput(limits), { counterId: "a", requestID: "r1" })).toBe('unknown field "requestID" (did you mean "requestId"?)');
    expect(message(incrementCounterInput(limits), { counterId: "a", detla: 2 })).toBe('unknown field "detla" (did you mean "delta"?)');
    expect(message(createCounterInput(limits), { counterId: "a", shards: 3 })).toBe('unknown field "shards" (did you mean "numShards"?)');
    expect(message(setMemberInput(), { counterId: "a", liked: true })).toBe('unknown field "liked": not part of this request');
    expect(message(setMemberInput(), { counterId: "a", member: true, uid: "u", Member: false })).toBe('unknown fields "uid", "Member" (did you mean "member"?)');
  });

  it("never echoes the bad value", () => {
    const secret = "s3cr3t-value-that-must-not-leak";
    expect(message(incrementCounterInput(limits), { counterId: secret + "!" })).not.toContain(secret);
    expect(message(incrementCounterInput(limits), { counterId: "a", delta: secret })).not.toContain(secret);
  });

  it("reads a non-object as 'data must be an object'", () => {
    expect(message(createCounterInput(limits), null)).toBe("data must be an object");
    expect(message(createCounterInput(limits), [1])).toBe("data must be an object");
  });

  it("uses the deployed bounds in the message", () => {
    expect(message(createCounterInput({ maxShards: 50, maxGrownShards: 1000, maxDelta: 5 }), { numShards: 51 })).toBe(
      "numShards must be an integer from 1 to 50",
    );
    expect(message(incrementCounterInput({ maxShards: 50, maxGrownShards: 1000, maxDelta: 5 }), { counterId: "a", delta: 6 })).toBe(
      "delta must be a non-zero integer from -5 to 5",
    );
  });

  it("lets reshardCounter go up to MAX_GROWN_SHARDS, where createCounter stops at MAX_SHARDS", () => {
    const bounds = { maxShards: 50, maxGrownShards: 1000, maxDelta: 5 };
    expect(reshardCounterInput(bounds).safeParse({ counterId: "a", numShards: 1000 }).success).toBe(true);
    expect(message(reshardCounterInput(bounds), { counterId: "a", numShards: 1001 })).toBe("numShards must be an integer from 1 to 1000");
    expect(message(createCounterInput(bounds), { numShards: 51 })).toBe("numShards must be an integer from 1 to 50");
  });
});

describe("resembles", () => {
  const FIELDS = ["counterId", "delta", "requestId"];

  it.each([
    ["counterID", "counterId"],
    ["counterid", "counterId"],
    ["countrId", "counterId"],
    ["delts", "delta"],
    ["Delta", "delta"],
    ["request", "requestId"],
    ["requestIds", "requestId"],
  ])("takes %s for %s", (typo, meant) => {
    expect(resembles(typo, FIELDS)).toBe(meant);
  });

  it.each(["amount", "uid", "id", "total", "constructor", "__proto__", `${"x".repeat(100)}delta`])("finds nothing %s stands for", (name) => {
    expect(resembles(name, FIELDS)).toBeUndefined();
  });

  it("prefers the same name in another case, then the nearest, then the first listed", () => {
    expect(resembles("ab", ["AB", "ac"])).toBe("AB");
    expect(resembles("abcd", ["abxy", "abcx"])).toBe("abcx");
    expect(resembles("abcd", ["abcx", "abcy"])).toBe("abcx");
  });
});
