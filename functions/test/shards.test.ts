import { pickShard, readCount, removedShardIds, shardIds, spread } from "../src/model/shards";

describe("pickShard", () => {
  it.each([
    [0, 10, 0],
    [0.0999, 10, 0],
    [0.1, 10, 1],
    [0.5, 10, 5],
    [0.999999, 10, 9],
    [0.42, 1, 0],
    [0.999, 200, 199],
  ])("random %p with %p shards picks shard %p", (random, numShards, expected) => {
    expect(pickShard(numShards, () => random)).toBe(expected);
  });

  it("spreads uniformly over all shards", () => {
    const hits = new Array<number>(10).fill(0);
    for (let i = 0; i < 1000; i++) hits[pickShard(10, () => i / 1000)]! += 1;
    expect(hits).toEqual(new Array<number>(10).fill(100));
  });

  it.each([0, -1, 1.5, Number.NaN])("rejects numShards %p", (numShards) => {
    expect(() => pickShard(numShards, () => 0)).toThrow(RangeError);
  });

  it.each([1, -0.1, Number.NaN])("rejects a random source returning %p", (r) => {
    expect(() => pickShard(10, () => r)).toThrow(RangeError);
  });
});

describe("shardIds", () => {
  it("names shards 0 … numShards-1", () => {
    expect(shardIds(3)).toEqual(["0", "1", "2"]);
    expect(removedShardIds(5, 3)).toEqual(["3", "4"]);
    expect(removedShardIds(3, 5)).toEqual([]);
  });
});

describe("readCount", () => {
  it.each([
    ["a missing document", undefined, { value: 0, malformed: false }],
    ["an integer", { count: 7 }, { value: 7, malformed: false }],
    ["a negative integer", { count: -3 }, { value: -3, malformed: false }],
    ["a missing field", {}, { value: 0, malformed: true }],
    ["a string", { count: "7" }, { value: 0, malformed: true }],
    ["a float", { count: 1.5 }, { value: 0, malformed: true }],
    ["a number beyond 2^53", { count: 2 ** 60 }, { value: 0, malformed: true }],
    ["null", { count: null }, { value: 0, malformed: true }],
  ])("reads %s", (_name, data, expected) => {
    expect(readCount(data as Record<string, unknown> | undefined)).toEqual(expected);
  });
});

describe("spread", () => {
  it.each([
    [10, 3, [4, 3, 3]],
    [-10, 3, [-4, -3, -3]],
    [2, 4, [1, 1, 0, 0]],
    [0, 2, [0, 0]],
  ])("spreads %p over %p shards as %p, keeping the sum", (amount, keep, expected) => {
    const parts = spread(amount, keep);
    expect(parts).toEqual(expected);
    expect(parts.reduce((a, b) => a + b, 0)).toBe(amount);
  });
});
