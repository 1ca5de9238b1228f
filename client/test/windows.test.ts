// The pure window arithmetic (windows.ts): UTC days, the window for the client's current UTC day from a
// parent's rollup.days whatever day its windows were written for, which own increments fall in a span,
// and the next UTC midnight. Clocks are plain numbers, so every hour and boundary is tested here. Also
// watch()'s check of its options (no emulator: a bad window throws before anything is listened to).
import { deleteApp, initializeApp } from "firebase/app";
import { getFirestore } from "firebase/firestore";
import { getFunctions } from "firebase/functions";
import { createCounterClient } from "../src";
import type { OwnIncrement, Time } from "../src/coverage";
import {
  addDays,
  dayOf,
  dayOfTime,
  isDay,
  isWindowName,
  msUntilNextUtcMidnight,
  ownInWindow,
  readServerWindows,
  serverWindow,
  sumWindow,
  windowToShow,
  type ServerWindows,
  type WindowName,
} from "../src/windows";

const ms = (iso: string): number => Date.parse(iso);
/** The Firestore time of an ISO instant (its milliseconds as nanoseconds), or of its second and `nanoseconds`. */
const time = (iso: string, nanoseconds?: number): Time => ({
  seconds: Math.floor(ms(iso) / 1000),
  nanoseconds: nanoseconds ?? (ms(iso) % 1000) * 1_000_000,
});
const answered = (delta: number, iso: string): OwnIncrement => ({ delta, writeTime: time(iso) });
const inFlight = (delta: number, sentAfter: Time | null): OwnIncrement => ({ delta, writeTime: null, sentAfter });

/** A parent document as readServerWindows reads it (field paths as the SDK's get). */
function parent(fields: Record<string, unknown>) {
  return {
    get: (field: string): unknown => (field === "rollup.days" ? (fields.rollup as { days?: unknown } | undefined)?.days : fields[field]),
  };
}

// A windowed parent last written on 2026-12-31: the days its windows sum, one of each span's edges.
const DAYS = {
  "2026-12-31": 1, // windows.day
  "2026-12-30": 2,
  "2026-12-25": 4, // 6 days before: the first day of last7Days
  "2026-12-24": 8, // 7 days before: only in last30Days
  "2026-12-02": 16, // 29 days before: the first day of last30Days
};
const YEAR_END: ServerWindows = { day: "2026-12-31", values: { today: 1, last7Days: 7, last30Days: 31 }, days: DAYS };

const all = (server: ServerWindows, nowIso: string) =>
  Object.fromEntries((["today", "last7Days", "last30Days"] as WindowName[]).map((w) => [w, serverWindow(server, w, ms(nowIso))]));

describe("UTC days", () => {
  it.each([
    ["2026-12-31T23:59:59.999Z", "2026-12-31"],
    ["2027-01-01T00:00:00.000Z", "2027-01-01"],
    ["2028-02-29T12:00:00.000Z", "2028-02-29"],
    ["2028-03-01T00:00:00.000Z", "2028-03-01"],
  ])("dayOf(%s) is %s", (iso, day) => {
    expect(dayOf(ms(iso))).toBe(day);
  });

  it("takes a time's day from its seconds: nanoseconds never move it past midnight", () => {
    expect(dayOfTime(time("2026-12-31T23:59:59Z", 999_999_999))).toBe("2026-12-31");
    expect(dayOfTime(time("2027-01-01T00:00:00Z", 0))).toBe("2027-01-01");
  });

  it.each([
    ["2026-12-31", 1, "2027-01-01"],
    ["2027-01-01", -1, "2026-12-31"],
    ["2028-02-28", 1, "2028-02-29"],
    ["2028-02-29", 1, "2028-03-01"],
    ["2027-03-01", -1, "2027-02-28"],
    ["2027-01-05", -29, "2026-12-07"],
    ["2026-12-31", 0, "2026-12-31"],
  ])("addDays(%s, %d) is %s", (day, n, expected) => {
    expect(addDays(day, n)).toBe(expected);
  });

  it("knows a real day from anything else", () => {
    expect(["2028-02-29", "2026-12-31", "2027-01-01"].every(isDay)).toBe(true);
    expect(["2027-02-29", "2026-13-01", "2026-04-31", "2026-1-01", "2026-01-01T00:00:00Z", "", 20260101, null, undefined].some(isDay)).toBe(false);
  });

  it.each([
    ["2026-12-31T23:59:59.999Z", 1],
    ["2027-01-01T00:00:00.000Z", 86_400_000],
    ["2027-01-01T00:00:00.001Z", 86_399_999],
    ["2028-02-28T12:00:00.000Z", 43_200_000],
    ["1969-12-31T23:00:00.000Z", 3_600_000],
  ])("from %s the next UTC midnight is %d ms away", (iso, wait) => {
    expect(msUntilNextUtcMidnight(ms(iso))).toBe(wait);
  });

  it("names the three windows and nothing else", () => {
    expect(["today", "last7Days", "last30Days"].every(isWindowName)).toBe(true);
    expect(["Today", "last7days", "toString", "constructor", "", undefined, 7].some(isWindowName)).toBe(false);
  });
});

describe("readServerWindows", () => {
  it("reads windows and rollup.days of a windowed parent", () => {
    const read = readServerWindows(parent({ windowed: true, windows: { day: "2026-12-31", today: 1, last7Days: 7, last30Days: 31 }, rollup: { days: DAYS } }));
    expect(read).toEqual(YEAR_END);
  });

  it("is null for a counter that is not windowed", () => {
    expect(readServerWindows(parent({ total: 3 }))).toBeNull();
    expect(readServerWindows(parent({ windowed: "true", windows: { day: "2026-12-31", today: 1 } }))).toBeNull();
    expect(readServerWindows(parent({ windowed: false, windows: { day: "2026-12-31", today: 1 }, rollup: { days: {} } }))).toBeNull();
  });

  it("reads an empty rollup.days (a new or reset counter) as every day 0", () => {
    expect(readServerWindows(parent({ windowed: true, windows: { day: "2027-01-01", today: 0, last7Days: 0, last30Days: 0 }, rollup: { days: {} } }))?.days).toEqual({});
  });

  it.each([
    ["a key that is not a day", { "2026-12-31": 1, "2027-02-29": 2 }],
    ["a fractional sum", { "2026-12-31": 1.5 }],
    ["a sum that is a string", { "2026-12-31": "1" }],
    ["an unsafe sum", { "2026-12-31": 2 ** 53 }],
    ["an array", [1, 2]],
    ["a number", 7],
    ["null", null],
  ])("drops the whole rollup.days for %s, keeping windows", (_name, days) => {
    const read = readServerWindows(parent({ windowed: true, windows: { day: "2026-12-31", today: 1, last7Days: 7, last30Days: 31 }, rollup: { days } }));
    expect(read).toEqual({ ...YEAR_END, days: null });
  });

  it("keeps only the windows values that are safe integers, and a day only if it is one", () => {
    const read = readServerWindows(parent({ windowed: true, windows: { day: "2026-12-32", today: "1", last7Days: 7.5, last30Days: 31 } }));
    expect(read).toEqual({ day: null, values: { last30Days: 31 }, days: null });
    expect(readServerWindows(parent({ windowed: true }))).toEqual({ day: null, values: {}, days: null });
  });
});

describe("serverWindow: the window for the client's current UTC day", () => {
  it("sums the spans' days on the windows' own day, up to its last millisecond", () => {
    expect(all(YEAR_END, "2026-12-31T23:59:59.999Z")).toEqual({
      today: { day: "2026-12-31", value: 1 },
      last7Days: { day: "2026-12-31", value: 7 },
      last30Days: { day: "2026-12-31", value: 31 },
    });
  });

  it("moves at the client's midnight without a write: a day old, the oldest day of each span drops", () => {
    expect(all(YEAR_END, "2027-01-01T00:00:00.000Z")).toEqual({
      today: { day: "2027-01-01", value: 0 },
      last7Days: { day: "2027-01-01", value: 3 }, // 2026-12-25 left the span
      last30Days: { day: "2027-01-01", value: 15 }, // 2026-12-02 left the span
    });
  });

  it("three days old: only the days still in each span count", () => {
    expect(all(YEAR_END, "2027-01-03T08:00:00Z")).toEqual({
      today: { day: "2027-01-03", value: 0 },
      last7Days: { day: "2027-01-03", value: 3 }, // 12-28 .. 01-03
      last30Days: { day: "2027-01-03", value: 15 }, // 12-05 .. 01-03
    });
  });

  it("forty days old: every window is 0, whatever windows.* still say", () => {
    expect(all(YEAR_END, "2027-02-09T00:00:00Z")).toEqual({
      today: { day: "2027-02-09", value: 0 },
      last7Days: { day: "2027-02-09", value: 0 },
      last30Days: { day: "2027-02-09", value: 0 },
    });
  });

  it("across a leap day", () => {
    const leap: ServerWindows = { day: "2028-02-29", values: {}, days: { "2028-02-29": 5, "2028-02-23": 3, "2028-02-22": 7, "2028-01-31": 11 } };
    expect(all(leap, "2028-02-29T23:59:59.999Z")).toEqual({
      today: { day: "2028-02-29", value: 5 },
      last7Days: { day: "2028-02-29", value: 8 }, // 02-23 .. 02-29
      last30Days: { day: "2028-02-29", value: 26 }, // 01-31 .. 02-29
    });
    expect(all(leap, "2028-03-01T00:00:00Z")).toEqual({
      today: { day: "2028-03-01", value: 0 },
      last7Days: { day: "2028-03-01", value: 5 }, // 02-24 .. 03-01
      last30Days: { day: "2028-03-01", value: 15 }, // 02-01 .. 03-01
    });
  });

  it("shows windows.day's values as they are when the client's clock is behind it", () => {
    expect(all(YEAR_END, "2026-12-30T23:59:58Z")).toEqual({
      today: { day: "2026-12-31", value: 1 },
      last7Days: { day: "2026-12-31", value: 7 },
      last30Days: { day: "2026-12-31", value: 31 },
    });
    expect(serverWindow({ ...YEAR_END, days: null }, "last7Days", ms("2026-12-30T23:59:58Z"))).toEqual({ day: "2026-12-31", value: 7 });
  });

  it("falls back to windows.* without a readable rollup.days, only on windows.day itself", () => {
    const noDays: ServerWindows = { ...YEAR_END, days: null };
    expect(serverWindow(noDays, "last30Days", ms("2026-12-31T10:00:00Z"))).toEqual({ day: "2026-12-31", value: 31 });
    expect(serverWindow(noDays, "today", ms("2027-01-01T00:00:00Z"))).toEqual({ day: "2027-01-01", value: null });
    expect(serverWindow({ ...noDays, values: { today: 1 } }, "last7Days", ms("2026-12-31T10:00:00Z"))).toEqual({ day: "2026-12-31", value: null });
  });

  it("prefers rollup.days to windows.* on the same day", () => {
    const disagreeing: ServerWindows = { day: "2026-12-31", values: { today: 99 }, days: { "2026-12-31": 4 } };
    expect(serverWindow(disagreeing, "today", ms("2026-12-31T10:00:00Z"))).toEqual({ day: "2026-12-31", value: 4 });
  });

  it("is null without a readable windows.day, which bounds what rollup.days holds", () => {
    expect(serverWindow({ day: null, values: { today: 1 }, days: { "2026-12-31": 1 } }, "today", ms("2026-12-31T10:00:00Z"))).toEqual({ day: "2026-12-31", value: null });
  });

  it("sumWindow counts a missing day as 0 and leaves out days after the span's end", () => {
    expect(sumWindow({ "2027-01-02": 5, "2026-12-31": 1 }, "last7Days", "2027-01-01")).toBe(1);
    expect(sumWindow({}, "last30Days", "2027-01-01")).toBe(0);
  });
});

describe("ownInWindow: which of the client's own increments a window's span holds", () => {
  const nearMidnight = [answered(1, "2026-12-31T23:59:59.900Z"), answered(2, "2027-01-01T00:00:00.100Z"), inFlight(4, null)];

  it("puts an answered increment on the UTC day of its writeTime and an unanswered one on the window's day", () => {
    expect(ownInWindow(nearMidnight, "today", "2027-01-01").map((o) => o.delta)).toEqual([2, 4]);
    expect(ownInWindow(nearMidnight, "last7Days", "2027-01-01").map((o) => o.delta)).toEqual([1, 2, 4]);
    expect(ownInWindow(nearMidnight, "today", "2026-12-31").map((o) => o.delta)).toEqual([1, 4]); // 00:00:00.100 is after the span
  });

  it("leaves out an increment older than the span", () => {
    const own = [answered(8, "2026-12-25T12:00:00Z"), answered(16, "2026-12-24T23:59:59Z")];
    expect(ownInWindow(own, "last7Days", "2026-12-31").map((o) => o.delta)).toEqual([8]);
    expect(ownInWindow(own, "last30Days", "2026-12-31").map((o) => o.delta)).toEqual([8, 16]);
  });
});

describe("windowToShow: the server's window plus own increments of its span not covered", () => {
  const covered = time("2026-12-31T23:59:59Z", 950_000_000); // the parent's rollup.readTime

  it("just after midnight: an own increment of yesterday not covered yet stays in yesterday", () => {
    const own = [answered(1, "2026-12-31T23:59:59.980Z"), answered(2, "2027-01-01T00:00:00.100Z"), answered(32, "2026-12-31T23:59:59.900Z")];
    // 32 is covered (before readTime): it is in rollup.days already. 1 and 2 are not.
    expect(windowToShow(YEAR_END, "today", ms("2027-01-01T00:00:00.200Z"), covered, own)).toEqual({ day: "2027-01-01", windowTotal: 0, pending: 2, value: 2 });
    expect(windowToShow(YEAR_END, "last7Days", ms("2027-01-01T00:00:00.200Z"), covered, own)).toEqual({ day: "2027-01-01", windowTotal: 3, pending: 3, value: 6 });
  });

  it("just before midnight: an unanswered increment is today's", () => {
    const own = [inFlight(4, covered)];
    expect(windowToShow(YEAR_END, "today", ms("2026-12-31T23:59:59.999Z"), covered, own)).toEqual({ day: "2026-12-31", windowTotal: 1, pending: 4, value: 5 });
  });

  it("is undefined while an in-flight call may or may not be in the snapshot", () => {
    const own = [inFlight(4, time("2026-12-31T23:00:00Z"))];
    expect(windowToShow(YEAR_END, "last30Days", ms("2026-12-31T23:59:59.999Z"), covered, own)).toBeUndefined();
  });

  it("a decrement of an older day in the span counts like any delta", () => {
    const own = [answered(-3, "2026-12-31T23:59:59.990Z")];
    expect(windowToShow(YEAR_END, "last7Days", ms("2027-01-02T09:00:00Z"), covered, own)).toEqual({ day: "2027-01-02", windowTotal: 3, pending: -3, value: 0 });
  });

  it("is null, with no pending, when the window is unreadable", () => {
    const own = [answered(5, "2027-01-01T00:00:01Z")];
    expect(windowToShow({ ...YEAR_END, days: null }, "today", ms("2027-01-01T00:00:02Z"), covered, own)).toEqual({ day: "2027-01-01", windowTotal: null, pending: 0, value: null });
  });
});

describe("watch's options", () => {
  it("throws a TypeError at once for a window that is not one of the three, or options that are not an object", async () => {
    const app = initializeApp({ projectId: "demo-client-unit", apiKey: "demo-api-key" }, "client-windows-unit");
    const client = createCounterClient({ functions: getFunctions(app), firestore: getFirestore(app) });
    const loose = client as unknown as { watch(...a: unknown[]): unknown };
    const message = 'options.window must be "today", "last7Days" or "last30Days"';
    try {
      for (const window of ["week", "Today", "toString", 7, null]) {
        expect(() => loose.watch("c", () => undefined, undefined, { window })).toThrow(new TypeError(message));
      }
      expect(() => loose.watch("c", () => undefined, undefined, "today")).toThrow(new TypeError("options must be an object or undefined"));
      expect(() => loose.watch("c", () => undefined, undefined, null)).toThrow(new TypeError("options must be an object or undefined"));
    } finally {
      client.dispose(); // a watch that did not throw listens: stop it, or jest waits for it
      await deleteApp(app);
    }
  });
});
