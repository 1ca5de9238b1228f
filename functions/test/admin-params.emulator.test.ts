// The admin entry's copy of the params against the counters codebase's as deployed (docs/admin.md, "Where
// the admin entry's rules come from"), against the Firestore emulator: the counters codebase publishes the
// values it runs with (entry/publish-params.ts), and the admin entry, in a process that is not the counters
// codebase (this file loads the admin entry and the publisher, never the functions' main entry), refuses a
// copy that differs, before anything is written, naming the param, both values and where each comes from;
// goes ahead when nothing is published yet; sees a new deploy's values at once; compares a maintenance
// run's values; catches a DATABASE_ID that names the wrong database; and compares nothing in a process that
// runs the counters codebase itself.
import { FieldPath, getFirestore } from "firebase-admin/firestore";
import * as admin from "../src/admin";
import { defaultApp } from "../src/default-app";
import { publishParams } from "../src/entry/publish-params";
import { counterRef, deployedParamsRef } from "../src/model/paths";
import { markCountersCodebase } from "../src/runs-here";
import { pathsUnderIn } from "../../test/helpers/documents";
import { requireEmulators } from "../../test/helpers/emulators";
import { logger } from "../../test/helpers/logger";

beforeAll(requireEmulators);
jest.setTimeout(60_000);

const db = getFirestore(defaultApp());
const OTHER_DB = "counters-elsewhere";
let serial = 0;
const id = (name: string) => `adp-${name}-${Date.now().toString(36)}-${serial++}`;

const saved = { ...process.env };
beforeEach(async () => {
  for (const level of ["debug", "info", "warn"] as const) jest.spyOn(logger, level).mockImplementation(() => undefined);
  process.env.UNIQUE_COUNTERS = "adp-{id}-likes";
  process.env.DATABASE_ID = "(default)";
  await clearPublished();
});
afterEach(() => {
  jest.restoreAllMocks();
  for (const name of ["UNIQUE_COUNTERS", "DATABASE_ID", "MAX_SHARDS", "EXTENSION_COUNTERS"]) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});
// Other test files compare with what is published: leave nothing behind.
afterAll(clearPublished);

async function clearPublished(): Promise<void> {
  await deployedParamsRef(db).delete();
  await deployedParamsRef(getFirestore(defaultApp(), OTHER_DB)).delete();
}

/** A deploy of the counters codebase with the environment as it is now: its functions publish. */
async function deployCounters(): Promise<void> {
  await publishParams({ recheck: true, by: "createCounter" });
}

/** The CounterError an admin call was refused with. */
async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(admin.CounterError);
  return { code: (error as admin.CounterError).code, message: (error as admin.CounterError).message };
}

describe("the admin entry's copy of the params", () => {
  it("is refused when it differs from the deployed one, naming the param, both values and where each comes from; nothing is written", async () => {
    await deployCounters();
    const published = await deployedParamsRef(db).get();
    expect(published.get("params")).toMatchObject({ UNIQUE_COUNTERS: "adp-{id}-likes", MAX_SHARDS: "200", DATABASE_ID: "(default)", EXTENSION_COUNTERS: "" });
    expect(published.get("publishedBy")).toBe("createCounter");
    // The app's codebase deployed alone with an old .env: it lacks UNIQUE_COUNTERS.
    process.env.UNIQUE_COUNTERS = "";
    const counterId = id("x");
    const { code, message } = await refusal(admin.createCounter(`adp-${counterId}-likes`));
    expect(code).toBe("failed-precondition");
    expect(message).toContain(`UNIQUE_COUNTERS is "" in this process's environment but "adp-{id}-likes" in the counters codebase as deployed`);
    expect(message).toMatch(/published by createCounter at \d{4}-\d\d-\d\dT[\d:.]+Z in counters\/~exactCounter\/exactCounterParams\/deployed of database \(default\)/);
    expect(message).toContain("nothing was written");
    expect(await pathsUnderIn(db, `adp-${counterId}-likes`)).toEqual([]);
    // Every operation that writes is refused the same way.
    await expect(admin.incrementCounter(`adp-${counterId}-views`)).rejects.toMatchObject({ code: "failed-precondition" });
  });

  it("goes ahead with the same values, written differently (an integer with a leading 0, spaces around a list)", async () => {
    await deployCounters();
    process.env.UNIQUE_COUNTERS = " adp-{id}-likes ";
    process.env.MAX_SHARDS = "0200";
    const counterId = `adp-${id("same")}-likes`;
    await expect(admin.createCounter(counterId)).resolves.toMatchObject({ unique: true });
  });

  it("goes ahead when nothing is published yet (a fresh project, the emulator before any function ran)", async () => {
    process.env.UNIQUE_COUNTERS = "";
    const counterId = id("fresh");
    await expect(admin.createCounter(counterId)).resolves.toMatchObject({ counterId });
  });

  it("sees a new deploy's values at once, although it read the earlier ones moments ago", async () => {
    await deployCounters();
    await admin.createCounter(id("warm")); // reads and keeps the published values
    process.env.UNIQUE_COUNTERS = "adp-{id}-fans";
    await expect(admin.createCounter(id("stale"))).rejects.toMatchObject({ code: "failed-precondition" });
    await deployCounters(); // both codebases now deploy the new value
    await expect(admin.createCounter(`adp-${id("new")}-fans`)).resolves.toMatchObject({ unique: true });
  });

  it("compares a maintenance run's values: migrateExtension refused with a stale env, its dry run not", async () => {
    process.env.EXTENSION_COUNTERS = "adppages/{id}:visits=adp-{id}-visits";
    await deployCounters();
    const rule = { document: "adppages/{id}", field: "visits", counter: "adp-{id}-visits" };
    const stale = { EXTENSION_COUNTERS: "" };
    const run = async (options: { dryRun?: boolean }) => {
      for await (const item of admin.migrateExtension(rule, { env: stale, ...options })) void item;
    };
    const { message } = await refusal(run({}));
    expect(message).toContain('EXTENSION_COUNTERS is "" in the params given (options.env) but "adppages/{id}:visits=adp-{id}-visits" in the counters codebase as deployed');
    await expect(run({ dryRun: true })).resolves.toBeUndefined();
  });

  it("refuses a DATABASE_ID that names another database than the counters', read from (default) where the codebase publishes too", async () => {
    process.env.DATABASE_ID = OTHER_DB;
    await deployCounters();
    expect((await deployedParamsRef(getFirestore(defaultApp(), OTHER_DB)).get()).get("params.DATABASE_ID")).toBe(OTHER_DB);
    // The app's .env lacks DATABASE_ID: its copy writes into (default).
    process.env.DATABASE_ID = "(default)";
    const counterId = id("wrongdb");
    const { message } = await refusal(admin.createCounter(counterId));
    expect(message).toContain(`DATABASE_ID is "(default)" in this process's environment but "${OTHER_DB}" in the counters codebase as deployed`);
    expect((await counterRef(db, counterId).get()).exists).toBe(false);
    // A DATABASE_ID naming a third database finds nothing there, then the codebase's values in (default).
    process.env.DATABASE_ID = "nosuch-db";
    await expect(admin.createCounter(id("third"))).rejects.toMatchObject({ code: "failed-precondition" });
  });

  it("lives where no listing of counters finds it", async () => {
    await deployCounters();
    expect((await db.collection("counters").doc("~exactCounter").get()).exists).toBe(false);
    const listed = await db.collection("counters").orderBy(FieldPath.documentId()).startAt("~").get();
    expect(listed.docs.map((d) => d.id)).toEqual([]);
    expect((await db.collection("counters").where(FieldPath.documentId(), ">=", "~").count().get()).data().count).toBe(0);
  });

  // Last: what the main entry does when it loads (index.ts) cannot be undone in this file's modules.
  it("compares nothing in a process that runs the counters codebase itself: the functions read the same environment", async () => {
    await deployCounters();
    process.env.UNIQUE_COUNTERS = "";
    markCountersCodebase();
    const counterId = `adp-${id("here")}-likes`;
    await expect(admin.createCounter(counterId)).resolves.toMatchObject({ unique: false });
  });
});
