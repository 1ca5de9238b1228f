// What a reset writes onto the parent (model/reset-plan.ts), case by case; the model check runs the same
// decision under random schedules (functions/test/model.test.ts).
import { addDays, dayStartMs } from "../src/model/windows";
import { resetPlan, erasedDays, type ResetParent, type ResetRead } from "../src/model/reset-plan";

const DAY = "2027-05-10";
const us = (iso: string) => Date.parse(iso) * 1000;
const R = us(`${DAY}T12:00:00Z`);
const marks = { createdUs: us("2027-01-01T00:00:00Z"), resetUs: null, reshards: 2 };

/** A read at R: 30 on the shards, of which 10 today and 5 yesterday (a windowed counter), or no days. */
function readAt(windowed: boolean): ResetRead {
  return { readUs: R, marks, total: 30, days: windowed ? { [DAY]: 10, [addDays(DAY, -1)]: 5 } : null };
}

function parent(over: Partial<ResetParent> = {}): ResetParent {
  return { exists: true, marks, total: 30, coveredUntilUs: R - 1000, days: { [DAY]: 10, [addDays(DAY, -1)]: 5 }, ...over };
}

describe("resetPlan", () => {
  it("with no sum read after R on the parent: total 0 at R, no days", () => {
    expect(resetPlan(readAt(true), parent())).toEqual({ kind: "commit", total: 0, covers: "read", days: {} });
    expect(resetPlan(readAt(false), parent({ coveredUntilUs: null, days: null }))).toEqual({ kind: "commit", total: 0, covers: "read", days: null });
    expect(resetPlan(readAt(false), parent({ coveredUntilUs: R }))).toMatchObject({ covers: "read", total: 0 });
  });

  it("after a rollup committed a sum read at R' > R: that total minus what the reset erased, at R', never going back to R", () => {
    // At R' the shards held 30 + 4 (3 today, 1 tomorrow by a writer whose clock is ahead).
    const later = parent({ total: 34, coveredUntilUs: R + 5_000_000, days: { [DAY]: 13, [addDays(DAY, -1)]: 5, [addDays(DAY, 1)]: 1 } });
    expect(resetPlan(readAt(true), later)).toEqual({ kind: "commit", total: 4, covers: "kept", days: { [DAY]: 3, [addDays(DAY, 1)]: 1 } });
    expect(resetPlan(readAt(false), { ...later, days: null })).toEqual({ kind: "commit", total: 4, covers: "kept", days: null });
  });

  it("leaves at 0 a day closed at R, even one the parent no longer keeps (its clock a day ahead pruned it)", () => {
    const old = addDays(DAY, -30);
    const read: ResetRead = { ...readAt(true), days: { [DAY]: 10, [old]: 7 } };
    const later = parent({ total: 31, coveredUntilUs: R + 1000, days: { [DAY]: 11 } });
    expect(resetPlan(read, later)).toEqual({ kind: "commit", total: 1, covers: "kept", days: { [DAY]: 1 } });
  });

  it("reads again when another reset, a reshard or a delete and create ran since the read; gone when the parent is", () => {
    expect(resetPlan(readAt(true), parent({ marks: { ...marks, resetUs: R + 1 } }))).toEqual({ kind: "retry" });
    expect(resetPlan(readAt(true), parent({ marks: { ...marks, reshards: 3 } }))).toEqual({ kind: "retry" });
    expect(resetPlan(readAt(true), parent({ marks: { ...marks, createdUs: R + 10 } }))).toEqual({ kind: "retry" });
    expect(resetPlan(readAt(true), parent({ exists: false }))).toEqual({ kind: "gone" });
  });

  it("cannot subtract from rollup.days it cannot read: reconcile --fix sums them again", () => {
    expect(resetPlan(readAt(true), parent({ coveredUntilUs: R + 1000, days: null }))).toEqual({ kind: "unreadable-days" });
  });
});

describe("erasedDays", () => {
  it("takes the 31 days a parent keeps and the day after back to 0, around the resetting clock's day", () => {
    expect(erasedDays(DAY)).toEqual({ from: addDays(DAY, -30), to: addDays(DAY, 1) });
    expect(dayStartMs(erasedDays(DAY).to) - dayStartMs(erasedDays(DAY).from)).toBe(31 * 86_400_000);
  });
});
