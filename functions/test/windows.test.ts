// The pure arithmetic of windowed counters (model/windows.ts): UTC days, which days a
// sum must read, the windows of a day, when they next move, and the shard update that carries a day.
import { addDays, DAY_CLOSES_AFTER_MS, dayCountsOf, dayOf, daysAfter, daysFrom, isDay, KEPT_DAYS, nextMidnightMs, openDays, shardDaysOf, windowsMoveAtMs, windowsOf } from "../src/model/windows";
import { shardIncrement } from "../src/counters/shard-writes";
import { PRUNED_DAYS } from "../src/model/shards";

const at = (iso: string) => Date.parse(iso);
const us = (iso: string) => at(iso) * 1000;

describe("UTC days", () => {
  it("takes the UTC date, whatever the local time zone, to the last millisecond of the day", () => {
    expect(dayOf(at("2026-11-26T23:59:59.999Z"))).toBe("2026-11-26");
    expect(dayOf(at("2026-11-27T00:00:00.000Z"))).toBe("2026-11-27");
    expect(nextMidnightMs(at("2026-11-26T23:59:59.999Z"))).toBe(at("2026-11-27T00:00:00.000Z"));
  });

  it("crosses months, years and leap days", () => {
    expect(addDays("2026-12-31", 1)).toBe("2027-01-01");
    expect(addDays("2028-03-01", -1)).toBe("2028-02-29");
    expect(addDays("2027-03-01", -1)).toBe("2027-02-28");
    expect(daysFrom("2026-12-30", "2027-01-02")).toEqual(["2026-12-30", "2026-12-31", "2027-01-01", "2027-01-02"]);
    expect(daysFrom("2027-01-02", "2026-12-30")).toEqual([]);
  });

  it("accepts only real days", () => {
    expect(isDay("2028-02-29")).toBe(true);
    for (const bad of ["2027-02-29", "2026-13-01", "2026-1-01", "26-11-26", 20261126, null]) expect(isDay(bad)).toBe(false);
  });
});

describe("the days a sum reads", () => {
  it("reads only today once yesterday closed an hour after midnight", () => {
    expect(openDays(us("2026-11-26T10:00:00Z"), at("2026-11-26T10:00:01Z"), us("2026-11-26T10:00:01Z"))).toEqual(["2026-11-26"]);
    expect(openDays(us("2026-11-26T01:00:00.001Z"), at("2026-11-26T02:00:00Z"), us("2026-11-26T02:00:00Z"))).toEqual(["2026-11-26"]);
  });

  it("reads yesterday too while a write chosen for it can still commit", () => {
    expect(DAY_CLOSES_AFTER_MS).toBe(3_600_000);
    expect(openDays(us("2026-11-26T00:59:59Z"), at("2026-11-26T01:00:00Z"), us("2026-11-26T01:00:00Z"))).toEqual(["2026-11-25", "2026-11-26"]);
    expect(openDays(us("2026-11-25T23:59:59Z"), at("2026-11-26T00:00:01Z"), us("2026-11-26T00:00:01Z"))).toEqual(["2026-11-25", "2026-11-26"]);
  });

  it("reads every day since the last sum after a quiet spell, never more than the 31 the parent keeps", () => {
    expect(openDays(us("2026-11-20T12:00:00Z"), at("2026-11-23T12:00:00Z"), us("2026-11-23T12:00:00Z"))).toEqual(["2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23"]);
    const all = openDays(0, at("2026-11-26T12:00:00Z"), us("2026-11-26T12:00:00Z"));
    expect(KEPT_DAYS).toBe(31);
    expect(all).toHaveLength(31);
    expect(all[0]).toBe("2026-10-27");
    expect(all[30]).toBe("2026-11-26");
  });

  it("reads the new day too when its read time (or a writer's clock up to a minute ahead) has reached it, though its own clock has not", () => {
    // A write for the new day committed at 00:00:00.000 is covered by a read 3 ms later on a clock still before midnight.
    expect(openDays(us("2026-11-26T23:00:00Z"), at("2026-11-26T23:59:59.998Z"), us("2026-11-27T00:00:00.003Z"))).toEqual(["2026-11-26", "2026-11-27"]);
    expect(openDays(us("2026-11-26T23:00:00Z"), at("2026-11-26T23:59:30Z"), us("2026-11-26T23:59:30Z"))).toEqual(["2026-11-26", "2026-11-27"]);
    expect(openDays(us("2026-11-26T23:00:00Z"), at("2026-11-26T23:58:59Z"), us("2026-11-26T23:58:59Z"))).toEqual(["2026-11-26"]);
  });

  it("always reads today, even with a clock behind the last read time", () => {
    expect(openDays(us("2026-11-27T03:00:00Z"), at("2026-11-26T23:00:00Z"), us("2026-11-26T23:00:00Z"))).toEqual(["2026-11-26"]);
  });
});

describe("windows", () => {
  const days = { "2026-11-26": 2, "2026-11-20": 3, "2026-11-19": 5, "2026-10-28": 7, "2026-10-27": 100 };

  it("sums today, the 7 days and the 30 days that end with the day", () => {
    expect(windowsOf(days, "2026-11-26")).toEqual({ day: "2026-11-26", today: 2, last7Days: 5, last30Days: 17 });
    expect(windowsOf(days, "2026-11-27")).toEqual({ day: "2026-11-27", today: 0, last7Days: 2, last30Days: 10 });
    expect(windowsOf({}, "2026-11-26")).toEqual({ day: "2026-11-26", today: 0, last7Days: 0, last30Days: 0 });
  });

  it("keeps the summed days over the kept ones, drops days at 0 and days before the 30 and the day before them", () => {
    // 2026-10-27 is in no window of 2026-11-26, but in the month of 2026-11-25, which an instance whose
    // clock is seconds behind may still commit for after midnight.
    expect(daysAfter(days, { "2026-11-26": 4, "2026-11-25": 0 }, "2026-11-26")).toEqual({ "2026-11-26": 4, "2026-11-20": 3, "2026-11-19": 5, "2026-10-28": 7, "2026-10-27": 100 });
    expect(daysAfter({ ...days, "2026-10-26": 1 }, {}, "2026-11-26")).not.toHaveProperty("2026-10-26");
    expect(daysAfter({ "2026-11-27": 1 }, {}, "2026-11-26")).toEqual({});
    // A day after today that the sum read is kept for the windows to come.
    expect(daysAfter({}, { "2026-11-26": 0, "2026-11-27": 2 }, "2026-11-26")).toEqual({ "2026-11-27": 2 });
  });

  it("moves at the next midnight while any window holds a day that is not 0, never otherwise", () => {
    expect(windowsMoveAtMs(days, "2026-11-26")).toBe(at("2026-11-27T00:00:00Z"));
    expect(windowsMoveAtMs({ "2026-10-28": 1 }, "2026-11-26")).toBe(at("2026-11-27T00:00:00Z"));
    expect(windowsMoveAtMs({ "2026-10-27": 1 }, "2026-11-26")).toBeNull();
    expect(windowsMoveAtMs({}, "2026-11-26")).toBeNull();
    // Tomorrow's count enters `today` at the next midnight: the windows move then.
    expect(windowsMoveAtMs({ "2026-11-27": 2 }, "2026-11-26")).toBe(at("2026-11-27T00:00:00Z"));
  });

  it("reads rollup.days whole or not at all: one entry that is not a day with a safe integer makes it unreadable", () => {
    expect(dayCountsOf({ "2026-11-26": 3, "2026-11-25": 0 })).toEqual({ "2026-11-26": 3, "2026-11-25": 0 });
    expect(dayCountsOf({})).toEqual({});
    for (const bad of [{ "2026-02-30": 1 }, { x: 2 }, { "2026-11-25": 1.5 }, { "2026-11-24": "4" }]) {
      expect(dayCountsOf({ "2026-11-26": 3, ...bad })).toBeNull();
    }
    expect(dayCountsOf(null)).toBeNull();
    expect(dayCountsOf([1])).toBeNull();
  });

  it("reads a shard's days leaving out what is not a day with a safe integer", () => {
    expect(shardDaysOf({ "2026-11-26": 3, "2026-02-30": 1, x: 2, "2026-11-25": 1.5, "2026-11-24": "4" })).toEqual({ "2026-11-26": 3 });
    expect(shardDaysOf(null)).toBeNull();
    expect(shardDaysOf([1])).toBeNull();
  });
});

describe("a windowed shard increment", () => {
  it("adds the delta to the day in the same update and deletes the days no window spans any more", () => {
    const update = shardIncrement(3, "2026-11-26");
    const fields = Object.keys(update).sort();
    expect(fields).toContain("days.2026-11-26");
    expect(fields).toContain("count");
    expect(fields).toContain("writes");
    const pruned = fields.filter((f) => f.startsWith("days.") && f !== "days.2026-11-26");
    expect(pruned).toEqual(daysFrom(addDays("2026-11-26", -PRUNED_DAYS.to), addDays("2026-11-26", -PRUNED_DAYS.from)).map((d) => `days.${d}`));
    // A sum reads back to the 30th day before its own day, which can be the writer's day minus one.
    expect(pruned).not.toContain(`days.${addDays("2026-11-26", -31)}`);
    expect(PRUNED_DAYS.from).toBeGreaterThan(KEPT_DAYS);
  });

  it("writes no day for a counter that is not windowed", () => {
    expect(Object.keys(shardIncrement(1)).sort()).toEqual(["count", "writes"]);
  });
});
