// When a write takes the extension's field and when a fold creates the counter (model/extension-field.ts),
// every case of the one decision the fold (trigger and migration) and the creations of counters share.
import { fieldDecision, foldPlan, type FoldState } from "../src/model/extension-field";

describe("fieldDecision", () => {
  it("takes the field only where neither a record nor the counter exists, and records it", () => {
    expect(fieldDecision({ record: false, parent: false }, 120)).toEqual({ taken: 120, createRecord: true, settlement: "taken" });
    expect(fieldDecision({ record: false, parent: false }, 0)).toEqual({ taken: 0, createRecord: true, settlement: "taken" });
  });

  it("leaves the field of a counter that exists without a record (it may hold the counter's mirrored total), and records that", () => {
    expect(fieldDecision({ record: false, parent: true }, 10)).toEqual({ taken: 0, createRecord: true, settlement: "left" });
  });

  it("never takes it again once a record exists, whether the counter exists or was deleted", () => {
    expect(fieldDecision({ record: true, parent: true }, 130)).toEqual({ taken: 0, createRecord: false, settlement: "before" });
    expect(fieldDecision({ record: true, parent: false }, 130)).toEqual({ taken: 0, createRecord: false, settlement: "before" });
  });
});

describe("foldPlan", () => {
  const state = (over: Partial<FoldState>): FoldState => ({
    record: false,
    parent: false,
    deleting: false,
    documentExists: true,
    fieldPresent: true,
    field: 120,
    moves: 1,
    sum: 3,
    ...over,
  });

  it("creates the counter with the field and the amounts when nothing of it exists", () => {
    expect(foldPlan(state({}), "trigger")).toEqual({ kind: "write", field: { taken: 120, createRecord: true, settlement: "taken" }, total: 123, createsCounter: true });
  });

  it("creates the counter of a page whose extension count is 0 (the migration), and of none without a count", () => {
    const zero = state({ field: 0, moves: 0, sum: 0 });
    expect(foldPlan(zero, "migration")).toMatchObject({ kind: "write", total: 0, createsCounter: true });
    expect(foldPlan(state({ fieldPresent: false, field: 0, moves: 0, sum: 0 }), "migration")).toEqual({ kind: "nothing" });
  });

  it("adds only the amounts to a counter that exists, with or without a record", () => {
    expect(foldPlan(state({ parent: true }), "trigger")).toMatchObject({ kind: "write", total: 3, createsCounter: false, field: { settlement: "left" } });
    expect(foldPlan(state({ parent: true, record: true }), "trigger")).toMatchObject({ kind: "write", total: 3, createsCounter: false, field: { createRecord: false } });
  });

  it("no counter from nowhere: the trigger does not create one under a document that does not exist; the migration does", () => {
    const ghost = state({ documentExists: false, fieldPresent: false, field: 0 });
    expect(foldPlan(ghost, "trigger")).toEqual({ kind: "no-document" });
    expect(foldPlan(ghost, "migration")).toMatchObject({ kind: "write", total: 3, createsCounter: true });
    // A counter that exists takes the amounts, although its page is gone.
    expect(foldPlan({ ...ghost, parent: true, record: true }, "trigger")).toMatchObject({ kind: "write", total: 3, createsCounter: false });
  });

  it("brings a deleted counter back only with new amounts, never from its field alone", () => {
    expect(foldPlan(state({ record: true, moves: 0, sum: 0 }), "migration")).toEqual({ kind: "nothing" });
    expect(foldPlan(state({ record: true }), "trigger")).toMatchObject({ kind: "write", total: 3, createsCounter: true, field: { taken: 0 } });
  });

  it("waits while the id is still being deleted", () => {
    expect(foldPlan(state({ deleting: true }), "trigger")).toEqual({ kind: "deleting" });
    expect(foldPlan(state({ deleting: true, parent: true }), "trigger")).toMatchObject({ kind: "write" });
  });
});
