// Unique counters, wrapped, against the real Firestore emulator: createCounter({ unique }) and
// UNIQUE_COUNTERS, setMember, its membership record and its refusals, the refusals of incrementCounter and resetCounter, reshard,
// and delete / create again with members, also racing setMember calls. (The same through the real SDK
// and the real rollup trigger: functions/test/members-e2e.emulator.test.ts.)
import { FieldValue, Timestamp } from "firebase-admin/firestore";
import {
  ADMIN,
  USER,
  call,
  db,
  documentsUnder,
  functions,
  httpsErrorOf,
  raceWithDelete,
  readCounter,
  shardSum,
  uniqueId,
  withParam,
  type Caller,
} from "../../test/helpers/functions";
import { documentsUnderIn } from "../../test/helpers/documents";
import { requireEmulators } from "../../test/helpers/emulators";
import { captureErrorLogs } from "../../test/helpers/rollup";
import { withConcurrency } from "../../test/helpers/client";
import { cleanupRef, counterRef, memberRef, membershipRef, membersRef, requestsRef, shardRef } from "../src/model/paths";
import { cleanUp, cleanupRound } from "../src/counters/deletion";
import * as members from "../src/counters/members";

const { createCounter, incrementCounter, setMember, resetCounter, reshardCounter, deleteCounter } = functions;

interface MemberAnswer {
  counterId: string;
  member: boolean;
  changed: boolean;
  writeTime: { seconds: number; nanoseconds: number } | null;
}

beforeAll(requireEmulators);
jest.setTimeout(120_000);

const user = (n: number | string): Caller => ({ uid: `member-${n}` });

function like(counterId: string, caller: Caller, member = true): Promise<MemberAnswer> {
  return call<MemberAnswer>(setMember, { counterId, member }, caller);
}

async function newUniqueCounter(prefix: string, numShards: number): Promise<string> {
  const counterId = uniqueId(prefix);
  await expect(call(createCounter, { counterId, numShards, unique: true })).resolves.toEqual({ counterId, numShards, unique: true, windowed: false });
  return counterId;
}

async function memberIds(counterId: string): Promise<string[]> {
  return (await membersRef(db, counterId).get()).docs.map((d) => d.id).sort();
}

/** Every document under the counter with its data and update time: proves "nothing written". */
async function snapshotOf(counterId: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const doc of await documentsUnderIn(db, counterId)) out[doc.ref.path] = { data: doc.data(), updateTime: doc.updateTime?.valueOf() };
  return out;
}

async function expectRefused(promise: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  const error = await httpsErrorOf(promise);
  expect(error.code).toBe(code);
  expect(error.message).toMatch(message);
}

const asTimestamp = (w: { seconds: number; nanoseconds: number }) => new Timestamp(w.seconds, w.nanoseconds);

describe("createCounter with unique", () => {
  it("creates a unique counter: answers unique: true and stores it on the parent", async () => {
    const counterId = await newUniqueCounter("uniq", 3);
    const parent = await counterRef(db, counterId).get();
    expect(parent.get("unique")).toBe(true);
    expect(parent.get("total")).toBe(0);
    expect(await shardSum(counterId)).toBe(0);
  });

  it("creates a plain counter when unique is omitted or false, and stores unique: false", async () => {
    for (const data of [{}, { unique: false }]) {
      const counterId = uniqueId("plain");
      await expect(call(createCounter, { counterId, numShards: 2, ...data })).resolves.toEqual({ counterId, numShards: 2, unique: false, windowed: false });
      expect((await counterRef(db, counterId).get()).get("unique")).toBe(false);
    }
  });
});

describe("createCounter with UNIQUE_COUNTERS", () => {
  withParam("UNIQUE_COUNTERS", "post-{id}-likes, poll-votes");

  it("makes a matching id unique when unique is omitted", async () => {
    const counterId = `post-${uniqueId("p")}-likes`;
    await expect(call(createCounter, { counterId, numShards: 2 })).resolves.toEqual({ counterId, numShards: 2, unique: true, windowed: false });
    expect((await counterRef(db, counterId).get()).get("unique")).toBe(true);
  });

  it("accepts unique: true for a matching id", async () => {
    const counterId = `post-${uniqueId("p")}-likes`;
    await expect(call(createCounter, { counterId, unique: true })).resolves.toMatchObject({ unique: true });
  });

  it("rejects unique: false for a matching id with invalid-argument naming unique, and writes nothing", async () => {
    const counterId = `post-${uniqueId("p")}-likes`;
    await expectRefused(call(createCounter, { counterId, unique: false }), "invalid-argument", /^unique must be true or omitted/);
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("leaves ids that match no pattern plain", async () => {
    const counterId = `post-${uniqueId("p")}-views`;
    await expect(call(createCounter, { counterId })).resolves.toMatchObject({ unique: false });
    // A literal pattern matches only itself.
    const near = `poll-votes-${uniqueId("n")}`;
    await expect(call(createCounter, { counterId: near })).resolves.toMatchObject({ unique: false });
  });

  it("closes the threat: a likes counter cannot be pre-created as plain and inflated with increments", async () => {
    const counterId = `post-${uniqueId("p")}-likes`;
    await httpsErrorOf(call(createCounter, { counterId, unique: false }));
    await call(createCounter, { counterId }); // whoever creates it gets a unique counter
    await expectRefused(call(incrementCounter, { counterId, delta: 1000 }), "failed-precondition", /unique counter/);
    expect(await shardSum(counterId)).toBe(0);
  });
});

describe("createCounter with UNIQUE_COUNTERS={id}", () => {
  withParam("UNIQUE_COUNTERS", "{id}");

  it("applies the patterns to an auto id too", async () => {
    const result = await call<{ counterId: string; unique: boolean }>(createCounter, { numShards: 1 });
    expect(result.unique).toBe(true);
    expect((await counterRef(db, result.counterId).get()).get("unique")).toBe(true);
  });
});

describe("an invalid UNIQUE_COUNTERS at run time", () => {
  withParam("UNIQUE_COUNTERS", "post-{id}-likes,posts/{id}");
  const errors = captureErrorLogs();

  it("refuses createCounter with internal, logs the bad pattern, and writes nothing", async () => {
    const counterId = uniqueId("bad-param");
    await expectRefused(call(createCounter, { counterId }), "internal", /^internal error$/);
    expect(await documentsUnder(counterId)).toEqual([]);
    expect(errors.lines.some((l) => l.includes('UNIQUE_COUNTERS: pattern 2 \\"posts/{id}\\"'))).toBe(true);
  });

  it("never stops the counters that exist: increments and setMember still work", async () => {
    const plain = uniqueId("bad-param-plain");
    const unique = uniqueId("bad-param-unique");
    process.env.UNIQUE_COUNTERS = "";
    await call(createCounter, { counterId: plain, numShards: 1 });
    await call(createCounter, { counterId: unique, numShards: 1, unique: true });
    process.env.UNIQUE_COUNTERS = "posts/{id}";
    await expect(call(incrementCounter, { counterId: plain, delta: 2 })).resolves.toMatchObject({ applied: true });
    await expect(like(unique, USER)).resolves.toMatchObject({ changed: true });
  });
});

describe("setMember", () => {
  it("joins: writes the member document and +1 in one commit, and answers its commit time", async () => {
    const counterId = await newUniqueCounter("join", 3);
    const answer = await like(counterId, user(1));
    expect(Object.keys(answer).sort()).toEqual(["changed", "counterId", "member", "writeTime"]);
    expect(answer).toMatchObject({ counterId, member: true, changed: true });
    const memberDoc = await memberRef(db, counterId, "member-1").get();
    expect(memberDoc.exists).toBe(true);
    expect(await shardSum(counterId)).toBe(1);
    // One batch: the member document and the shard carry the same commit time, which is the answer's.
    const written = asTimestamp(answer.writeTime!);
    expect(memberDoc.updateTime!.isEqual(written)).toBe(true);
    const shards = await Promise.all([0, 1, 2].map((i) => shardRef(db, counterId, i).get()));
    expect(shards.filter((s) => s.updateTime!.isEqual(written))).toHaveLength(1);
    expect(answer.writeTime!.nanoseconds % 1000).toBe(0); // whole microseconds, like increments
  });

  it("answers a repeated join changed: false, writeTime: null, and writes nothing", async () => {
    const counterId = await newUniqueCounter("join-again", 2);
    await like(counterId, USER);
    const before = await snapshotOf(counterId);
    await expect(like(counterId, USER)).resolves.toEqual({ counterId, member: true, changed: false, writeTime: null });
    expect(await snapshotOf(counterId)).toEqual(before);
  });

  it("leaves: deletes the member document and -1 in one commit; a repeated leave writes nothing", async () => {
    const counterId = await newUniqueCounter("leave", 2);
    await like(counterId, USER);
    const left = await like(counterId, USER, false);
    expect(left).toMatchObject({ counterId, member: false, changed: true });
    expect((await memberRef(db, counterId, USER.uid).get()).exists).toBe(false);
    expect(await shardSum(counterId)).toBe(0);
    const shard = (await Promise.all([0, 1].map((i) => shardRef(db, counterId, i).get()))).find((s) =>
      s.updateTime!.isEqual(asTimestamp(left.writeTime!)),
    );
    expect(shard).toBeDefined();
    const before = await snapshotOf(counterId);
    await expect(like(counterId, USER, false)).resolves.toEqual({ counterId, member: false, changed: false, writeTime: null });
    expect(await snapshotOf(counterId)).toEqual(before);
  });

  it("answers a leave by a user who never joined changed: false and writes nothing", async () => {
    const counterId = await newUniqueCounter("never", 2);
    const before = await snapshotOf(counterId);
    await expect(like(counterId, USER, false)).resolves.toEqual({ counterId, member: false, changed: false, writeTime: null });
    expect(await snapshotOf(counterId)).toEqual(before);
  });

  it("counts each user once: the total is the number of members", async () => {
    const counterId = await newUniqueCounter("users", 4);
    for (const n of [1, 2, 3, 2, 1]) await like(counterId, user(n));
    await like(counterId, user(3), false);
    expect(await memberIds(counterId)).toEqual(["member-1", "member-2"]);
    expect(await shardSum(counterId)).toBe(2);
  });

  it("counts one of 10 concurrent joins of one user (a double tap, two devices) and removes it once", async () => {
    const counterId = await newUniqueCounter("double-tap", 4);
    const joins = await Promise.all(Array.from({ length: 10 }, () => like(counterId, USER)));
    expect(joins.filter((a) => a.changed)).toHaveLength(1);
    expect(joins.filter((a) => !a.changed).every((a) => a.writeTime === null)).toBe(true);
    expect(await shardSum(counterId)).toBe(1);
    const leaves = await Promise.all(Array.from({ length: 10 }, () => like(counterId, USER, false)));
    expect(leaves.filter((a) => a.changed)).toHaveLength(1);
    expect(await shardSum(counterId)).toBe(0);
    expect(await memberIds(counterId)).toEqual([]);
  });

  it("stays exact under 400 concurrent random joins and leaves of 25 users", async () => {
    const counterId = await newUniqueCounter("storm", 5);
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const calls = Array.from({ length: 400 }, () => ({ n: Math.floor(random() * 25), member: random() < 0.55 }));
    const answers = await withConcurrency(
      16,
      calls.map(({ n, member }) => async () => ({ n, answer: await like(counterId, user(n), member) })),
    );
    const net = new Map<number, number>();
    for (const { n, answer } of answers) {
      if (answer.changed) net.set(n, (net.get(n) ?? 0) + (answer.member ? 1 : -1));
      else expect(answer.writeTime).toBeNull();
    }
    const present = new Set(await memberIds(counterId));
    for (let n = 0; n < 25; n++) {
      const value = net.get(n) ?? 0;
      expect([0, 1]).toContain(value);
      expect(present.has(`member-${n}`)).toBe(value === 1);
    }
    expect(await shardSum(counterId)).toBe(present.size);
    expect(present.size).toBeGreaterThan(0);
  });

  it("answers the same change in order of commit: each user's changed answers alternate join, leave, join", async () => {
    const counterId = await newUniqueCounter("alternate", 2);
    const answers = await withConcurrency(
      6,
      Array.from({ length: 60 }, (_, i) => () => like(counterId, USER, i % 3 !== 0)),
    );
    const changed = answers.filter((a) => a.changed).sort((a, b) => asTimestamp(a.writeTime!).valueOf().localeCompare(asTimestamp(b.writeTime!).valueOf()));
    changed.forEach((a, i) => expect(a.member).toBe(changed[0]!.member ? i % 2 === 0 : i % 2 === 1));
    expect(changed[0]!.member).toBe(true); // nobody can leave before joining
    const isMember = (await memberRef(db, counterId, USER.uid).get()).exists;
    expect(changed[changed.length - 1]!.member).toBe(isMember);
    expect(await shardSum(counterId)).toBe(isMember ? 1 : 0);
  });

  it("counts once when the answer of a committed join is lost and the call is retried", async () => {
    const counterId = await newUniqueCounter("lost-answer", 3);
    // The batch commits, then the instance dies before answering (the client sees an error and retries).
    const lost = members.writeMembership(db, counterId, USER.uid, true, {
      onCommitted: () => {
        throw new Error("instance crashed after the commit");
      },
    });
    await expect(lost).rejects.toThrow("instance crashed");
    await expect(like(counterId, USER)).resolves.toEqual({ counterId, member: true, changed: false, writeTime: null });
    expect(await shardSum(counterId)).toBe(1);
    expect(await memberIds(counterId)).toEqual([USER.uid]);
    // The same for a leave.
    await expect(
      members.writeMembership(db, counterId, USER.uid, false, {
        onCommitted: () => {
          throw new Error("lost again");
        },
      }),
    ).rejects.toThrow("lost again");
    await expect(like(counterId, USER, false)).resolves.toMatchObject({ changed: false, writeTime: null });
    expect(await shardSum(counterId)).toBe(0);
  });

  it("reads the parent fresh: a counter another instance made plain is refused at once", async () => {
    const counterId = await newUniqueCounter("fresh", 1);
    await like(counterId, user(1)); // this instance now knows the counter
    await counterRef(db, counterId).update({ unique: false }); // as if deleted and re-created as plain elsewhere
    await expectRefused(like(counterId, user(2)), "failed-precondition", /is a plain counter: only unique counters count members/);
    expect(await memberIds(counterId)).toEqual(["member-1"]);
  });

  it("moves to kept shards when a reshard down removed the one it picked", async () => {
    const counterId = await newUniqueCounter("reshard-race", 8);
    const phase = (member: boolean, to: number) =>
      withConcurrency(
        8,
        Array.from({ length: 40 }, (_, n) => async () => {
          if (n === 15) await call(reshardCounter, { counterId, numShards: to }, ADMIN);
          return like(counterId, user(n), member);
        }),
      );
    expect((await phase(true, 3)).every((a) => a.changed)).toBe(true);
    expect(await shardSum(counterId)).toBe(40);
    expect((await phase(false, 1)).every((a) => a.changed)).toBe(true);
    expect(await shardSum(counterId)).toBe(0);
    expect(await memberIds(counterId)).toEqual([]);
  });
});

describe("the membership record (counters/{id}/memberships/{uid})", () => {
  type Answer = { member: boolean; writeTime: { seconds: number; nanoseconds: number } };

  /** The record as it was at `at` (a read-only transaction at that read time). */
  async function recordAt(counterId: string, uid: string, at: Timestamp): Promise<Record<string, unknown> | undefined> {
    return db.runTransaction(async (tx) => (await tx.get(membershipRef(db, counterId, uid))).data(), { readOnly: true, readTime: at });
  }

  /** One microsecond earlier (Firestore's precision). */
  const justBefore = (t: Timestamp) => (t.nanoseconds >= 1000 ? new Timestamp(t.seconds, t.nanoseconds - 1000) : new Timestamp(t.seconds - 1, 999_999_000 + t.nanoseconds));

  /**
   * Checks that the changed answers, in commit order, are the record's versions: each written in its
   * change's commit without its time, pointing at the exact time of the change before, and given its own
   * time before the next change (unless the next one came first); the record now holds the last one's.
   */
  async function expectChain(counterId: string, uid: string, changed: Answer[], first: Timestamp | null = null): Promise<void> {
    const ordered = changed.map((a) => ({ member: a.member, at: asTimestamp(a.writeTime) })).sort((a, b) => a.at.valueOf().localeCompare(b.at.valueOf()));
    let previousChangedAt = first;
    for (const [i, { member, at }] of ordered.entries()) {
      expect(await recordAt(counterId, uid, at)).toEqual({ member, changedAt: null, previousChangedAt });
      const next = ordered[i + 1]?.at;
      if (next !== undefined) {
        const settled = await recordAt(counterId, uid, justBefore(next));
        expect([{ member, changedAt: null, previousChangedAt }, { member, changedAt: at, previousChangedAt }]).toContainEqual(settled);
      }
      previousChangedAt = at;
    }
    const last = ordered[ordered.length - 1]!;
    expect((await membershipRef(db, counterId, uid).get()).data()).toEqual({
      member: last.member,
      changedAt: last.at,
      previousChangedAt: ordered[ordered.length - 2]?.at ?? first,
    });
    expect((await memberRef(db, counterId, uid).get()).exists).toBe(last.member);
  }

  it("is written with each change: changedAt is the answer's writeTime, previousChangedAt the change before's", async () => {
    const counterId = await newUniqueCounter("record", 2);
    const joined = await like(counterId, USER);
    const record = membershipRef(db, counterId, USER.uid);
    const snap = await record.get();
    expect(snap.data()).toEqual({ member: true, changedAt: asTimestamp(joined.writeTime!), previousChangedAt: null });
    // Written in the change's commit (the member document's), its time written after it.
    expect(snap.createTime!.isEqual(asTimestamp(joined.writeTime!))).toBe(true);
    expect(snap.updateTime!.valueOf() > snap.createTime!.valueOf()).toBe(true);
    const left = await like(counterId, USER, false);
    const again = await like(counterId, USER);
    expect((await record.get()).data()).toEqual({ member: true, changedAt: asTimestamp(again.writeTime!), previousChangedAt: asTimestamp(left.writeTime!) });
    await expectChain(counterId, USER.uid, [joined, left, again] as Answer[]);
    // Unchanged calls write nothing, the record included.
    const before = await snapshotOf(counterId);
    await like(counterId, USER);
    await like(counterId, user("never"), false);
    expect(await snapshotOf(counterId)).toEqual(before);
  });

  it("keeps one chain when one user's calls race from several clients (double taps, two devices)", async () => {
    const counterId = await newUniqueCounter("record-race", 3);
    const answers = await withConcurrency(
      8,
      Array.from({ length: 80 }, (_, i) => () => like(counterId, USER, i % 3 !== 1)),
    );
    const changed = answers.filter((a) => a.changed) as Answer[];
    expect(changed.length).toBeGreaterThan(2);
    await expectChain(counterId, USER.uid, changed);
    expect(await shardSum(counterId)).toBe((await memberRef(db, counterId, USER.uid).get()).exists ? 1 : 0);
  });

  it("a join that read the membership before the same user joined and left elsewhere reads again and points at that leave", async () => {
    const counterId = await newUniqueCounter("record-aba", 2);
    const first = (await like(counterId, USER)) as Answer;
    const second = (await like(counterId, USER, false)) as Answer;
    let inner: Answer[] = [];
    // The member document is absent at the read and again at the commit, so its create() cannot tell that
    // a join and a leave committed in between: only the record's precondition can.
    const outer = await members.writeMembership(db, counterId, USER.uid, true, {
      beforeCommit: async () => {
        if (inner.length > 0) return;
        inner = [(await like(counterId, USER)) as Answer, (await like(counterId, USER, false)) as Answer];
      },
    });
    expect(outer.changed).toBe(true);
    expect(inner.map((a) => a.member)).toEqual([true, false]);
    await expectChain(counterId, USER.uid, [first, second, ...inner, outer as Answer]);
    expect(await shardSum(counterId)).toBe(1);
  });

  it("a change that commits before the last one's time is written takes that time from the record and leaves it", async () => {
    const counterId = await newUniqueCounter("record-overtaken", 2);
    let leave: Answer | undefined;
    const join = await members.writeMembership(db, counterId, USER.uid, true, {
      beforeTimeWritten: async () => {
        leave = (await like(counterId, USER, false)) as Answer;
      },
    });
    expect(join.changed).toBe(true);
    await expectChain(counterId, USER.uid, [join as Answer, leave!]);
  });

  /** A join whose instance dies between its commit and the write of its time: the record stays without it. */
  async function joinThatDied(counterId: string): Promise<Timestamp> {
    const died = members.writeMembership(db, counterId, USER.uid, true, {
      beforeTimeWritten: () => {
        throw new Error("instance died after the commit");
      },
    });
    await expect(died).rejects.toThrow("instance died");
    const record = await membershipRef(db, counterId, USER.uid).get();
    expect(record.data()).toEqual({ member: true, changedAt: null, previousChangedAt: null });
    const committedAt = (await memberRef(db, counterId, USER.uid).get()).createTime!;
    expect(record.updateTime!.isEqual(committedAt)).toBe(true);
    return committedAt;
  }

  it("a record whose time was never written (the instance died) gets it from the retry, which answers unchanged", async () => {
    const counterId = await newUniqueCounter("record-healed", 2);
    const committedAt = await joinThatDied(counterId);
    await expect(like(counterId, USER)).resolves.toEqual({ counterId, member: true, changed: false, writeTime: null });
    expect((await membershipRef(db, counterId, USER.uid).get()).data()).toEqual({ member: true, changedAt: committedAt, previousChangedAt: null });
    expect(await shardSum(counterId)).toBe(1);
    // Healed, the record is as if the time had been written at once: a further retry writes nothing.
    const before = await snapshotOf(counterId);
    await like(counterId, USER);
    expect(await snapshotOf(counterId)).toEqual(before);
    const left = (await like(counterId, USER, false)) as Answer;
    expect((await membershipRef(db, counterId, USER.uid).get()).data()).toEqual({ member: false, changedAt: asTimestamp(left.writeTime), previousChangedAt: committedAt });
  });

  it("a record whose time was never written: a change the other way takes the exact time from the record", async () => {
    const counterId = await newUniqueCounter("record-died", 2);
    const committedAt = await joinThatDied(counterId);
    const left = (await like(counterId, USER, false)) as Answer;
    expect((await membershipRef(db, counterId, USER.uid).get()).data()).toEqual({ member: false, changedAt: asTimestamp(left.writeTime), previousChangedAt: committedAt });
  });

  it("starts from the member document's creation for a member that an older version wrote without a record", async () => {
    const counterId = await newUniqueCounter("record-legacy", 2);
    const legacy = db.batch();
    legacy.create(memberRef(db, counterId, USER.uid), {});
    legacy.update(shardRef(db, counterId, 0), { count: FieldValue.increment(1) });
    const [created] = await legacy.commit();
    const left = (await like(counterId, USER, false)) as Answer;
    expect(left).toMatchObject({ changed: true, member: false });
    await expectChain(counterId, USER.uid, [left], created!.writeTime);
    expect(await shardSum(counterId)).toBe(0);
  });

  it("does not take a record that contradicts the member document as history (one left by a deleted counter of the same id)", async () => {
    const counterId = await newUniqueCounter("record-stale", 2);
    // A member of a counter deleted before: the record says "member since 1000", the member document is gone.
    await membershipRef(db, counterId, USER.uid).set({ member: true, changedAt: new Timestamp(1000, 0), previousChangedAt: null });
    const joined = (await like(counterId, USER)) as Answer;
    await expectChain(counterId, USER.uid, [joined]);
    expect(await shardSum(counterId)).toBe(1);
  });
});

describe("setMember refusals (nothing written)", () => {
  it("refuses a caller who is not signed in with unauthenticated", async () => {
    const counterId = await newUniqueCounter("anon", 2);
    const before = await snapshotOf(counterId);
    await expectRefused(call(setMember, { counterId, member: true }, null), "unauthenticated", /setMember requires a signed-in user/);
    expect(await snapshotOf(counterId)).toEqual(before);
  });

  describe("with ALLOW_UNAUTHENTICATED=true", () => {
    withParam("ALLOW_UNAUTHENTICATED", "true");
    it("still refuses a caller who is not signed in with unauthenticated", async () => {
      const counterId = await newUniqueCounter("anon-allowed", 2);
      const before = await snapshotOf(counterId);
      await expectRefused(call(setMember, { counterId, member: true }, null), "unauthenticated", /signed-in/);
      expect(await snapshotOf(counterId)).toEqual(before);
    });
  });

  it("refuses a plain counter with failed-precondition naming UNIQUE_COUNTERS and the fix, and writes nothing", async () => {
    const counterId = uniqueId("plain-member");
    await call(createCounter, { counterId, numShards: 2 });
    const before = await snapshotOf(counterId);
    await expectRefused(like(counterId, USER), "failed-precondition", /is a plain counter: only unique counters count members\. .*add their pattern to UNIQUE_COUNTERS/);
    await expectRefused(like(counterId, USER, false), "failed-precondition", /is a plain counter: only unique counters count members\. .*add their pattern to UNIQUE_COUNTERS/);
    expect(await snapshotOf(counterId)).toEqual(before);
  });

  it("refuses an unknown counter with not-found and creates nothing", async () => {
    const counterId = uniqueId("no-such");
    await expectRefused(like(counterId, USER), "not-found", new RegExp(counterId));
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("refuses a uid that cannot name a document with invalid-argument", async () => {
    const counterId = await newUniqueCounter("bad-uid", 1);
    const before = await snapshotOf(counterId);
    for (const uid of ["a/b", "x/members/y", "..", "__id__"]) {
      await expectRefused(like(counterId, { uid }), "invalid-argument", /auth\.uid/);
    }
    expect(await snapshotOf(counterId)).toEqual(before);
  });
});

describe("the other callables on a unique counter", () => {
  it("refuses incrementCounter with failed-precondition, with or without a requestId, writing nothing", async () => {
    const counterId = await newUniqueCounter("no-inc", 2);
    await like(counterId, USER);
    const before = await snapshotOf(counterId);
    await expectRefused(call(incrementCounter, { counterId }), "failed-precondition", /unique counter; only setMember/);
    await expectRefused(call(incrementCounter, { counterId, delta: -1, requestId: "r-1" }), "failed-precondition", /unique counter/);
    expect(await snapshotOf(counterId)).toEqual(before);
    expect((await requestsRef(db, counterId).get()).size).toBe(0);
  });

  it("refuses resetCounter with failed-precondition, writing nothing", async () => {
    const counterId = await newUniqueCounter("no-reset", 2);
    await like(counterId, USER);
    const before = await snapshotOf(counterId);
    await expectRefused(call(resetCounter, { counterId }, ADMIN), "failed-precondition", /unique counter; its total is its number of members/);
    expect(await snapshotOf(counterId)).toEqual(before);
  });

  it.each([
    ["up", 2, 7],
    ["down", 7, 2],
  ])("reshards a unique counter %s, keeping the sum equal to the members", async (_dir, from, to) => {
    const counterId = await newUniqueCounter(`reshard-${String(_dir)}`, from);
    for (let n = 0; n < 12; n++) await like(counterId, user(n));
    await expect(call(reshardCounter, { counterId, numShards: to }, ADMIN)).resolves.toEqual({ counterId, numShards: to });
    expect(await shardSum(counterId)).toBe(12);
    for (let n = 0; n < 5; n++) await like(counterId, user(n), false);
    expect(await shardSum(counterId)).toBe(7);
    expect((await memberIds(counterId)).length).toBe(7);
    expect((await readCounter(counterId)).numShards).toBe(to);
  });
});

describe("deleteCounter and create again", () => {
  it("deletes the members too, over several pages, and the deletion marker last", async () => {
    const counterId = await newUniqueCounter("del-members", 2);
    // 900 members, as if 900 users had joined: more than two cleanup pages.
    const writer = db.bulkWriter();
    for (let n = 0; n < 900; n++) void writer.create(memberRef(db, counterId, `seeded-${n}`), {});
    void writer.update(shardRef(db, counterId, 0), { count: FieldValue.increment(900) });
    await writer.close();
    await expect(call(deleteCounter, { counterId }, ADMIN)).resolves.toEqual({ counterId });
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("starts a counter created again with the same id empty: an old member joining again is changed: true", async () => {
    const counterId = await newUniqueCounter("recreate", 3);
    for (const n of [1, 2, 3]) await like(counterId, user(n));
    await call(deleteCounter, { counterId }, ADMIN);
    await expect(call(createCounter, { counterId, numShards: 3, unique: true })).resolves.toEqual({ counterId, numShards: 3, unique: true, windowed: false });
    expect(await memberIds(counterId)).toEqual([]);
    expect(await shardSum(counterId)).toBe(0);
    await expect(like(counterId, user(1), false)).resolves.toMatchObject({ changed: false }); // no old membership to leave
    await expect(like(counterId, user(1))).resolves.toMatchObject({ changed: true });
    expect(await shardSum(counterId)).toBe(1);
    expect(await memberIds(counterId)).toEqual(["member-1"]);
  });

  it("leaves nothing when 200 joins and leaves race it, and the counter created again counts only new joins", async () => {
    const counterId = await newUniqueCounter("del-race", 6);
    const { outcomes, deletedAt } = await raceWithDelete(counterId, 200, 70, async (i) => {
      const answer = await like(counterId, user(i % 30), i % 4 !== 3);
      return answer.changed ? "changed" : "unchanged";
    });
    expect(outcomes.every((o) => ["changed", "unchanged", "not-found"].includes(o.outcome))).toBe(true);
    expect(outcomes.filter((o) => o.startedAt > deletedAt).every((o) => o.outcome === "not-found")).toBe(true);
    expect(outcomes.filter((o) => o.outcome === "not-found").length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.outcome === "changed").length).toBeGreaterThan(0);
    expect(await documentsUnder(counterId)).toEqual([]);

    await call(createCounter, { counterId, numShards: 6, unique: true });
    const again = await Promise.all(Array.from({ length: 30 }, (_, n) => like(counterId, user(n))));
    expect(again.every((a) => a.changed)).toBe(true);
    expect(await shardSum(counterId)).toBe(30);
  });

  it("refuses to create the id while a deletion is still cleaning up, answers not-found to deleting it again; the cleanup finishes it", async () => {
    const counterId = await newUniqueCounter("half-deleted", 2);
    await like(counterId, USER);
    // A deletion cut off after its transaction (a timeout, a crash): parent and shards gone, marker and
    // members left.
    const batch = db.batch();
    batch.delete(counterRef(db, counterId));
    for (const i of [0, 1]) batch.delete(shardRef(db, counterId, i));
    batch.set(cleanupRef(db, counterId), { pages: 0 });
    await batch.commit();

    await expectRefused(call(createCounter, { counterId, unique: true }), "failed-precondition", /is still being deleted; try again shortly/);
    await expectRefused(like(counterId, user(2)), "not-found", /does not exist/);
    expect(await memberIds(counterId)).toEqual([USER.uid]);

    await expectRefused(call(deleteCounter, { counterId }, ADMIN), "not-found", /does not exist \(an earlier delete of it is still cleaning up\)/);
    expect(await memberIds(counterId)).toEqual([USER.uid]);
    // The round the sweep would resume (the marker has no round: 0), run here by hand.
    await expect(cleanupRound(db, counterId, 0, 10_000, { nowMs: Date.now })).resolves.toMatchObject({ done: true, stale: false });
    expect(await documentsUnder(counterId)).toEqual([]);
    await expect(call(createCounter, { counterId, unique: true })).resolves.toMatchObject({ unique: true });
    expect(await memberIds(counterId)).toEqual([]);
  });

  it("answers not-found for a counter that neither exists nor is being deleted", async () => {
    const counterId = uniqueId("del-none");
    await expectRefused(call(deleteCounter, { counterId }, ADMIN), "not-found", /does not exist/);
    expect(await documentsUnder(counterId)).toEqual([]);
  });

  it("a cleanup that runs late never deletes the members of the counter created again", async () => {
    const counterId = await newUniqueCounter("late-cleanup", 2);
    await call(deleteCounter, { counterId }, ADMIN);
    await call(createCounter, { counterId, unique: true });
    await like(counterId, user(1));
    await like(counterId, user(2));
    // A second cleanup of the first deletion, still running somewhere, finds no marker: it deletes nothing;
    // nor does a late round of the trigger.
    await expect(cleanUp(db, counterId, Date.now() + 5_000, { nowMs: Date.now })).resolves.toMatchObject({ done: true, removed: 0 });
    await expect(cleanupRound(db, counterId, 1, 5_000, { nowMs: Date.now })).resolves.toMatchObject({ removed: 0, stale: true });
    expect(await memberIds(counterId)).toEqual(["member-1", "member-2"]);
    expect(await shardSum(counterId)).toBe(2);
  });
});
