// Unique counters end to end, as apps use them: users signed in through the Auth emulator like and
// unlike with the Firebase JS SDK (callables served by the functions emulator), the real rollup trigger
// keeps the total, and an admin deletes and re-creates. Member documents are read with the admin SDK.
import { getAuth, signOut } from "firebase/auth";
import type { FunctionsError } from "firebase/functions";
import { functionsErrorCode, signedInClient, withConcurrency, type Client } from "../../test/helpers/client";
import { e2eAdminDb, waitFor } from "../../test/helpers/admin";
import { pathsUnderIn, shardSumIn } from "../../test/helpers/documents";
import { memberRef, membersRef } from "../src/model/paths";

jest.setTimeout(300_000);
const SETTLE_MS = 30_000;
const USERS = 8;

interface Answer {
  counterId: string;
  member: boolean;
  changed: boolean;
  writeTime: { seconds: number; nanoseconds: number } | null;
}

let admin: Client;
let users: Client[] = [];
const db = e2eAdminDb();

beforeAll(async () => {
  admin = await signedInClient({ admin: true });
  // One at a time: each sign-up is a request to the Auth emulator, which is cheap, but the first
  // callable per client boots a worker (the functions emulator starts one worker process per concurrent
  // request, and each takes seconds to start).
  for (let i = 0; i < USERS; i++) users.push(await signedInClient());
});

afterAll(async () => {
  await Promise.all([admin?.close(), ...users.map((u) => u.close())]);
  users = [];
});

function setMember(client: Client, counterId: string, member: boolean): Promise<Answer> {
  return client.call<Answer>("setMember", { counterId, member });
}

async function newUniqueCounter(prefix: string, numShards: number): Promise<string> {
  const counterId = `${prefix}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  await expect(users[0]!.call("createCounter", { counterId, numShards, unique: true })).resolves.toEqual({ counterId, numShards, unique: true, windowed: false });
  return counterId;
}

async function memberCount(counterId: string): Promise<number> {
  return (await membersRef(db, counterId).count().get()).data().count;
}

/** Waits until the total an app reads equals the number of member documents; returns both. */
async function settled(counterId: string): Promise<{ total: unknown; members: number; sum: number }> {
  const members = await memberCount(counterId);
  const { value } = await waitFor(async () => (await users[0]!.readCounter(counterId))?.total, members, SETTLE_MS);
  return { total: value, members, sum: await shardSumIn(db, counterId) };
}

describe("setMember through the JS SDK", () => {
  it("joins once, answers a repeat unchanged, leaves, and the total follows", async () => {
    const counterId = await newUniqueCounter("e2e-like", 3);
    const [alice, bob] = [users[0]!, users[1]!];
    const joined = await setMember(alice, counterId, true);
    expect(Object.keys(joined).sort()).toEqual(["changed", "counterId", "member", "writeTime"]);
    expect(joined).toMatchObject({ counterId, member: true, changed: true });
    expect(Number.isSafeInteger(joined.writeTime!.seconds)).toBe(true);
    expect(Number.isInteger(joined.writeTime!.nanoseconds)).toBe(true);
    const member = await memberRef(db, counterId, alice.user.uid).get();
    expect(member.exists).toBe(true);
    expect(member.updateTime!.seconds).toBe(joined.writeTime!.seconds);
    expect(member.updateTime!.nanoseconds).toBe(joined.writeTime!.nanoseconds);

    await expect(setMember(alice, counterId, true)).resolves.toEqual({ counterId, member: true, changed: false, writeTime: null });
    await setMember(bob, counterId, true);
    expect(await settled(counterId)).toEqual({ total: 2, members: 2, sum: 2 });

    await expect(setMember(alice, counterId, false)).resolves.toMatchObject({ member: false, changed: true });
    await expect(setMember(alice, counterId, false)).resolves.toEqual({ counterId, member: false, changed: false, writeTime: null });
    expect(await settled(counterId)).toEqual({ total: 1, members: 1, sum: 1 });
  });

  it(`stays exact under concurrent random likes and unlikes of ${USERS} users: total = member documents`, async () => {
    const counterId = await newUniqueCounter("e2e-storm", 4);
    const calls = Array.from({ length: 160 }, (_, i) => ({ u: i % USERS, member: Math.random() < 0.55 }));
    // Bounded concurrency: the functions emulator boots a worker per concurrent request (fact 6).
    const answers = await withConcurrency(
      4,
      calls.map(({ u, member }) => async () => ({ u, answer: await setMember(users[u]!, counterId, member) })),
    );
    const net = new Array<number>(USERS).fill(0);
    for (const { u, answer } of answers) {
      if (answer.changed) net[u]! += answer.member ? 1 : -1;
      else expect(answer.writeTime).toBeNull();
    }
    for (let u = 0; u < USERS; u++) {
      expect([0, 1]).toContain(net[u]);
      expect((await memberRef(db, counterId, users[u]!.user.uid).get()).exists).toBe(net[u] === 1);
    }
    const expected = net.reduce((a, b) => a + b, 0);
    expect(await settled(counterId)).toEqual({ total: expected, members: expected, sum: expected });
  });

  it("counts a double tap (two devices of one user at once) once", async () => {
    const counterId = await newUniqueCounter("e2e-double", 2);
    const user = users[2]!;
    const taps = await Promise.all([setMember(user, counterId, true), setMember(user, counterId, true), setMember(user, counterId, true)]);
    expect(taps.filter((a) => a.changed)).toHaveLength(1);
    expect(await settled(counterId)).toEqual({ total: 1, members: 1, sum: 1 });
  });
});

describe("refusals through the JS SDK (nothing written)", () => {
  it("refuses a signed-out app with unauthenticated", async () => {
    const counterId = await newUniqueCounter("e2e-anon", 2);
    const client = await signedInClient();
    try {
      await signOut(getAuth(client.app));
      expect(await functionsErrorCode(client.call("setMember", { counterId, member: true }))).toBe("functions/unauthenticated");
    } finally {
      await client.close();
    }
    expect(await memberCount(counterId)).toBe(0);
    expect(await shardSumIn(db, counterId)).toBe(0);
  });

  it("refuses a plain counter with failed-precondition, an unknown one with not-found, bad input with invalid-argument", async () => {
    const plain = `e2e-plain-${Date.now()}`;
    await users[0]!.call("createCounter", { counterId: plain, numShards: 2 });
    const before = await pathsUnderIn(db, plain);
    expect(await functionsErrorCode(setMember(users[0]!, plain, true))).toBe("functions/failed-precondition");
    expect(await pathsUnderIn(db, plain)).toEqual(before);

    const missing = `e2e-missing-${Date.now()}`;
    expect(await functionsErrorCode(setMember(users[0]!, missing, true))).toBe("functions/not-found");
    expect(await pathsUnderIn(db, missing)).toEqual([]);

    const unique = await newUniqueCounter("e2e-bad-input", 2);
    const bad = await users[0]!.call("setMember", { counterId: unique, member: "yes" }).catch((e: unknown) => e);
    expect((bad as FunctionsError).code).toBe("functions/invalid-argument");
    expect((bad as FunctionsError).message).toMatch(/^member must be a boolean/);
    const missingField = await users[0]!.call("setMember", { counterId: unique }).catch((e: unknown) => e);
    expect((missingField as FunctionsError).message).toMatch(/member/);
    const badUnique = await users[0]!.call("createCounter", { counterId: `e2e-u-${Date.now()}`, unique: "true" }).catch((e: unknown) => e);
    expect((badUnique as FunctionsError).code).toBe("functions/invalid-argument");
    expect((badUnique as FunctionsError).message).toMatch(/^unique must be a boolean/);
    expect(await memberCount(unique)).toBe(0);
  });

  it("refuses incrementCounter and resetCounter on a unique counter with failed-precondition", async () => {
    const counterId = await newUniqueCounter("e2e-no-inc", 2);
    await setMember(users[0]!, counterId, true);
    expect(await functionsErrorCode(users[0]!.call("incrementCounter", { counterId, delta: 5 }))).toBe("functions/failed-precondition");
    expect(await functionsErrorCode(admin.call("resetCounter", { counterId }))).toBe("functions/failed-precondition");
    expect(await settled(counterId)).toEqual({ total: 1, members: 1, sum: 1 });
  });

  it("lets an admin reshard a unique counter; the total stays the members", async () => {
    const counterId = await newUniqueCounter("e2e-reshard", 6);
    for (const user of users.slice(0, 5)) await setMember(user, counterId, true);
    await expect(admin.call("reshardCounter", { counterId, numShards: 2 })).resolves.toEqual({ counterId, numShards: 2 });
    await setMember(users[0]!, counterId, false);
    expect(await settled(counterId)).toEqual({ total: 4, members: 4, sum: 4 });
  });
});

describe("delete and create again through the JS SDK", () => {
  it("starts the counter created again empty: an old member's like counts again, once", async () => {
    const counterId = await newUniqueCounter("e2e-recreate", 3);
    for (const user of users.slice(0, 4)) await setMember(user, counterId, true);
    expect(await settled(counterId)).toMatchObject({ total: 4 });
    await expect(admin.call("deleteCounter", { counterId })).resolves.toEqual({ counterId });
    expect(await pathsUnderIn(db, counterId)).toEqual([]);

    await expect(admin.call("createCounter", { counterId, numShards: 3, unique: true })).resolves.toEqual({ counterId, numShards: 3, unique: true, windowed: false });
    expect(await memberCount(counterId)).toBe(0);
    expect((await users[0]!.readCounter(counterId))?.total).toBe(0);
    await expect(setMember(users[0]!, counterId, true)).resolves.toMatchObject({ changed: true });
    expect(await settled(counterId)).toEqual({ total: 1, members: 1, sum: 1 });
  });

  it("leaves nothing when likes race the delete, and no like from before counts in the counter created again", async () => {
    const counterId = await newUniqueCounter("e2e-del-race", 4);
    let deleting: Promise<unknown> | undefined;
    const outcomes = await withConcurrency(
      4,
      Array.from({ length: 120 }, (_, i) => async () => {
        if (i === 40) deleting = admin.call("deleteCounter", { counterId });
        if (i === 119) await deleting; // at least one call comes after the delete
        try {
          const answer = await setMember(users[i % USERS]!, counterId, i % 5 !== 4);
          return answer.changed ? "changed" : "unchanged";
        } catch (error) {
          return (error as FunctionsError).code;
        }
      }),
    );
    await deleting;
    expect(outcomes.every((o) => ["changed", "unchanged", "functions/not-found"].includes(o))).toBe(true);
    expect(outcomes.filter((o) => o === "functions/not-found").length).toBeGreaterThan(0);
    // Late trigger events must not recreate anything either.
    await new Promise((resolve) => setTimeout(resolve, 3 * Number(process.env.ROLLUP_INTERVAL_MS) + 2000));
    expect(await pathsUnderIn(db, counterId)).toEqual([]);

    await admin.call("createCounter", { counterId, numShards: 4, unique: true });
    const again = await withConcurrency(4, users.map((user) => () => setMember(user, counterId, true)));
    expect(again.every((a) => a.changed)).toBe(true);
    expect(await settled(counterId)).toEqual({ total: USERS, members: USERS, sum: USERS });
  });
});
