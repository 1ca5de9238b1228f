// deleteCounter on a counter with more idempotency records than a callable can delete before its timeout
// (60 s): through the JS SDK, with the real cleanup trigger running in the functions emulator. Deleting
// them inside the call, as deleteCounter did before, takes longer than the call may: the emulator lists a
// page of a large collection in time proportional to its size (about 1 s per page at 70,000 records), so
// 70,000 records took the old in-call cleanup about 90 s, and the admin saw an error although the
// counter was gone. Now the call
// answers within its budget and cleanupDeletedCounter finishes the rest, round by round
// (counters/deletion.ts); meanwhile the id cannot be created again, and once it can, nothing from before
// counts in the new counter.
import { FieldValue } from "firebase-admin/firestore";
import { functionsErrorCode, signedInClient, type Client } from "../../test/helpers/client";
import { e2eAdminDb } from "../../test/helpers/admin";
import { pathsUnderIn } from "../../test/helpers/documents";
import { cleanupRef, requestRef, requestsRef, shardRef } from "../src/model/paths";

/** More than 60 s of deletes in the emulator, so the old way timed out. */
const RECORDS = 70_000;

jest.setTimeout(900_000);

let admin: Client;
const db = e2eAdminDb();

beforeAll(async () => {
  admin = await signedInClient({ admin: true });
});

afterAll(async () => {
  await admin?.close();
});

it(`deletes a counter with ${RECORDS.toLocaleString("en-US")} idempotency records: the call answers in time, the trigger finishes, nothing from before survives`, async () => {
  const counterId = `del-scale-${Date.now()}`;
  await admin.call("createCounter", { counterId, numShards: 4 });
  const writer = db.bulkWriter({ throttling: false });
  for (let n = 0; n < RECORDS; n++) void writer.create(requestRef(db, counterId, `r-${n}`), { shard: n % 4, delta: 1, createdAt: FieldValue.serverTimestamp() });
  for (let s = 0; s < 4; s++) void writer.update(shardRef(db, counterId, s), { count: FieldValue.increment(RECORDS / 4) });
  await writer.close();

  const started = Date.now();
  await expect(admin.call("deleteCounter", { counterId })).resolves.toEqual({ counterId });
  const answeredMs = Date.now() - started;
  expect(answeredMs).toBeLessThan(60_000); // the callable's timeout: the old way passed it here
  expect((await db.collection("counters").doc(counterId).get()).exists).toBe(false);
  const marker = await cleanupRef(db, counterId).get();
  expect(marker.exists).toBe(true); // handed on: records remain
  expect(marker.get("round")).toBeGreaterThanOrEqual(1);
  expect(await functionsErrorCode(admin.call("createCounter", { counterId }))).toBe("functions/failed-precondition");

  // The trigger's rounds finish the cleanup and remove the marker.
  const deadline = Date.now() + 600_000;
  while ((await cleanupRef(db, counterId).get()).exists && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1_000));
  expect((await requestsRef(db, counterId).limit(1).get()).size).toBe(0);
  expect(await pathsUnderIn(db, counterId)).toEqual([]);

  // The id is free again, and a requestId from before is a new request for the new counter.
  await expect(admin.call("createCounter", { counterId, numShards: 4 })).resolves.toMatchObject({ counterId });
  await expect(admin.call("incrementCounter", { counterId, requestId: "r-7" })).resolves.toMatchObject({ applied: true });
});
