// Reconcile on unique counters, against the Firestore emulator: both drifts reported (total vs shard sum,
// shard sum vs member documents), --fix repairing the shards from the members and then the total, exactly
// also while setMember calls and other fixers run; and the CLI's lines and exit codes.
import { randomUUID } from "node:crypto";
import { deleteApp, initializeApp } from "firebase-admin/app";
import { FieldValue, getFirestore } from "firebase-admin/firestore";
import { reconcile } from "../../functions/src/reconcile/run";
import type { CounterReport } from "../../functions/src/reconcile/counter";
import { sumShards } from "../../functions/src/rollup/sum";
import { requireEmulators } from "../../test/helpers/emulators";
import { runReconcile } from "../../test/helpers/reconcile-cli";
import { withConcurrency } from "../../test/helpers/client";
import { counterRef, memberRef, membersRef, shardRef } from "../../functions/src/model/paths";
import { createParentAndShards } from "../../functions/src/counters/create";
import { writeMembership } from "../../functions/src/counters/members";

// A project of its own: no rollup trigger runs here, so totals move only when a test (or reconcile) commits.
const PROJECT = "demo-reconcile-unique";
const app = initializeApp({ projectId: PROJECT }, PROJECT);
const db = getFirestore(app);

jest.setTimeout(120_000);
beforeAll(requireEmulators);
afterAll(() => deleteApp(app));

async function newUnique(numShards: number, users: number): Promise<string> {
  const counterId = `u-${randomUUID().slice(0, 8)}`;
  await createParentAndShards(db, counterId, numShards, { unique: true });
  for (let n = 0; n < users; n++) await writeMembership(db, counterId, `user-${n}`, true);
  await settle(counterId);
  return counterId;
}

/** Commits the shard sum as the total, as the rollup would once it settles (a repair's commit is the rollup's own). */
async function settle(counterId: string): Promise<void> {
  const report = await reportOf(counterId, true);
  if (report.status !== "ok" && !report.fixed) throw new Error(`${counterId}: the sum was not committed (${report.status})`);
}

async function reportOf(counterId: string, fix = false): Promise<CounterReport> {
  for await (const report of reconcile(db, { counterIds: [counterId], fix })) return report;
  throw new Error("no report");
}

async function counts(counterId: string): Promise<{ total: unknown; sum: number; members: number }> {
  const sum = await sumShards(db, counterId);
  return {
    total: (await counterRef(db, counterId).get()).get("total"),
    sum: sum.overflow ? Number.NaN : sum.total,
    members: (await membersRef(db, counterId).count().get()).data().count,
  };
}

describe("reconcile on unique counters", () => {
  it("reports ok when total, shard sum and members agree", async () => {
    const counterId = await newUnique(3, 4);
    expect(await reportOf(counterId)).toMatchObject({
      status: "ok",
      unique: true,
      total: 4,
      sum: 4,
      drift: 0,
      members: 4,
      memberSum: 4,
      memberDrift: 0,
    });
  });

  it("reports a member document without its +1 as drift, even when total equals the shard sum", async () => {
    const counterId = await newUnique(2, 3);
    await memberRef(db, counterId, "orphan").create({});
    expect(await reportOf(counterId)).toMatchObject({ status: "drift", total: 3, sum: 3, drift: 0, members: 4, memberSum: 3, memberDrift: -1 });
  });

  it("reports both drifts for increments without members (what a stale-cache incrementCounter does)", async () => {
    const counterId = await newUnique(2, 3);
    await shardRef(db, counterId, 1).update({ count: FieldValue.increment(5) });
    expect(await reportOf(counterId)).toMatchObject({ status: "drift", total: 3, sum: 8, drift: -5, members: 3, memberSum: 8, memberDrift: 5 });
  });

  it("with fix, makes the shard sum and then the total equal the members", async () => {
    const counterId = await newUnique(4, 6);
    await shardRef(db, counterId, 3).update({ count: FieldValue.increment(9) });
    await memberRef(db, counterId, "orphan").create({});
    expect(await reportOf(counterId, true)).toMatchObject({ status: "drift", memberDrift: 8, fixed: true });
    expect(await counts(counterId)).toEqual({ total: 7, sum: 7, members: 7 });
    expect(await reportOf(counterId)).toMatchObject({ status: "ok", memberDrift: 0, drift: 0 });
  });

  it("with fix, repairs exactly while 200 joins and leaves and two other fixers run", async () => {
    const counterId = await newUnique(4, 10);
    await shardRef(db, counterId, 2).update({ count: FieldValue.increment(7) });
    await memberRef(db, counterId, "orphan-1").create({});
    await memberRef(db, counterId, "orphan-2").create({}); // members − sum = −5 before the storm
    const fixes: Promise<CounterReport>[] = [];
    await withConcurrency(
      4,
      Array.from({ length: 200 }, (_, i) => async () => {
        if (i === 50 || i === 51 || i === 120) fixes.push(reportOf(counterId, true));
        await writeMembership(db, counterId, `user-${i % 30}`, i % 3 !== 2);
      }),
    );
    const reports = await Promise.all(fixes);
    expect(reports.some((r) => r.fixed)).toBe(true);
    // Exactly one correction of −5 landed: a second fixer reading before it would have double-counted.
    const after = await counts(counterId);
    expect(after.sum).toBe(after.members);
    await settle(counterId);
    expect(await reportOf(counterId)).toMatchObject({ status: "ok", memberDrift: 0, drift: 0 });
  });

  it("with fix, applies the correction once when four fixers run at the same moment", async () => {
    const counterId = await newUnique(3, 5);
    await shardRef(db, counterId, 1).update({ count: FieldValue.increment(4) });
    const reports = await Promise.all(Array.from({ length: 4 }, () => reportOf(counterId, true)));
    // They read at about the same time (usually all before any repair); without the repair's precondition
    // on shard "0", each of those would subtract 4.
    expect(reports.some((r) => r.memberDrift === 4 && r.fixed)).toBe(true);
    expect(await counts(counterId)).toMatchObject({ sum: 5, members: 5 });
  });

  it("leaves members null on plain counters", async () => {
    const counterId = `p-${randomUUID().slice(0, 8)}`;
    await createParentAndShards(db, counterId, 1);
    expect(await reportOf(counterId)).toMatchObject({ unique: false, members: null, memberSum: null, memberDrift: null, status: "ok" });
  });
});

describe("npm run reconcile on a unique counter", () => {
  it("prints members and member-drift, exits 1, and 0 after --fix", async () => {
    const counterId = await newUnique(2, 2);
    await memberRef(db, counterId, "orphan").create({});
    const run = await runReconcile(PROJECT, ["--quiet", "--counter", counterId]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(new RegExp(`^drift +${counterId} +total=2 +sum=2 +members=3 +member-drift=-1\\n$`));
    const fixed = await runReconcile(PROJECT, ["--quiet", "--fix", "--counter", counterId]);
    expect(fixed.code).toBe(0);
    expect(fixed.stdout).toContain("FIXED");
    expect(await counts(counterId)).toEqual({ total: 3, sum: 3, members: 3 });
  });
});
