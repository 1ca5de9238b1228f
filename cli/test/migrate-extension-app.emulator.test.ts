// The move from the firestore-counter extension, end to end, following docs/from-the-extension.md step by
// step on an app with 200 extension counters laid out as the extension leaves them (test/helpers/extension.ts),
// pages whose extension count is 0 among them, while old app versions write their shards all along (only
// under pages that exist: what the shipped rules let them do):
// - step 2, the numbers taken before the fold trigger is deployed: `migrate-extension --dry-run` while old
//   clients write, each page's line between its extension value before the run and after it;
// - steps 1 and 3 (one reload here: the extension's workers, which step 1 keeps from fighting the mirror,
//   are not simulated): the functions emulator serving EXTENSION_COUNTERS, MIRRORS onto the same field and
//   AUTO_CREATE (functions/.env.local and a reload), `npm run migrate-extension` run while old clients write;
// - step 4, new pages after the move, while old and new app versions (signed-in users of the JS SDK calling
//   incrementCounter) write to old and new pages alike: half of their counters made by the app's own code
//   (the admin entry's createCounter, some after an old client's visit made them already), half by
//   AUTO_CREATE on their first new visit.
// Every counter ends exactly at what was written (the extension's value plus every later visit, old and new),
// nothing counted twice, the field on every page showing it, no amount left in a shard, the shards' other
// fields as they were; a second run moves nothing; and an old client's write under a page that does not
// exist creates nothing. Randomized: the seed is printed (EXTENSION_TEST_SEED=<seed> replays it).
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";
import { FieldPath } from "firebase-admin/firestore";
import { FunctionsError } from "firebase/functions";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { runNode } from "../../test/helpers/run";
import { E2E_PROJECT, isTransportFailure, signedInClient, withConcurrency, type Client } from "../../test/helpers/client";
import { e2eAdminDb } from "../../test/helpers/admin";
import { requireEmulators, requireFunctionsEmulator } from "../../test/helpers/emulators";
import { shardSumIn } from "../../test/helpers/documents";
import { localParams, type LocalParams } from "../../test/helpers/local-params";
import { untilPublished } from "../../test/helpers/published-params";
import { appCollection, incrementFields, SHARDS, withSeed, workerPartial } from "../../test/helpers/extension";
import { createParentAndShards } from "../../functions/src/counters/create";
import { addToRandomShard } from "../../functions/src/counters/increment";
import { LOCAL_ROLLUP_INTERVAL_MS } from "../src/init/codebase";
import * as adminEntry from "@firestore-exact-counter/functions/admin";

jest.setTimeout(600_000);

const db = e2eAdminDb();
const C = appCollection("xapp");
const PAGES = 200;
/** Pages whose extension count is 0 (the field at 0, no shard), and pages created after the move. */
const ZERO_PAGES = 10;
const NEW_PAGES = 20;
const FIELD = "stats.visits";
const RELOAD_MS = 120_000;
/**
 * How long the totals may take to settle once the writers stop, at most: the emulator runs trigger events one
 * at a time, and a busy counter's promise owner carries its chain inside its invocation while old clients keep
 * writing, so 200 busy counters' last events wait their turn in that one queue (at LOCAL_LOOP's interval, about
 * a second once the writers stop; at the production interval it took minutes). The check itself is exact: every
 * total equal to what was written.
 */
const SETTLE_MS = 300_000;
/** The counters codebase's params in this test (functions/.env.local), which the app's own code (the admin entry here) shares. */
const PARAMS = {
  EXTENSION_COUNTERS: `${C}/{id}:${FIELD}=${C}-{id}-visits`,
  MIRRORS: `${C}-{id}-visits=${C}/{id}:${FIELD}`,
  AUTO_CREATE: `${C}-{id}-visits=${C}/{id}`,
};
/**
 * The interval init writes into an app's .env.local, for the same reason: the emulator runs trigger events one
 * at a time, and at the production interval 200 busy counters' chains hold that queue for minutes.
 */
const LOCAL_LOOP = { ROLLUP_INTERVAL_MS: String(LOCAL_ROLLUP_INTERVAL_MS) };
let params: LocalParams;
const savedEnv = Object.fromEntries(Object.keys(PARAMS).map((name) => [name, process.env[name]]));

beforeAll(async () => {
  await requireEmulators();
  await requireFunctionsEmulator();
  params = localParams([...Object.keys(PARAMS), ...Object.keys(LOCAL_LOOP)]);
});

afterAll(async () => {
  // The emulator keeps a trigger registered after a reload drops it, and each of its queued events would
  // then boot a worker that fails: let the queue of this test's writes drain first (at most SETTLE_MS).
  await untilDrained();
  params.restore();
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await untilMirrorsOff();
});

/** Waits until the live trigger has folded a last probe write: every event queued before it was delivered. */
async function untilDrained(): Promise<void> {
  const counter = db.doc(`counters/${C}-probe-visits`);
  if (!(await counter.get()).exists) return;
  const before = await shardSumIn(db, `${C}-probe-visits`);
  await incrementFields(db, `${C}/probe`, "probe-device", { [FIELD]: 1 });
  const started = Date.now();
  while ((await shardSumIn(db, `${C}-probe-visits`)) === before && Date.now() - started < SETTLE_MS) await sleep(1000);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the reloaded functions fold old clients' writes (a probe page's counter appears); answers the probe's writes. */
async function untilFolding(): Promise<number> {
  const started = Date.now();
  let written = 0;
  await db.doc(`${C}/probe`).set({ title: "probe" }); // the fold makes counters only for pages that exist
  while (!(await db.doc(`counters/${C}-probe-visits`).get()).exists) {
    if (Date.now() - started > RELOAD_MS) throw new Error("the functions did not reload with EXTENSION_COUNTERS");
    await incrementFields(db, `${C}/probe`, "probe-device", { [FIELD]: 1 });
    written++;
    await sleep(1000);
  }
  return written;
}

/** After the restore: waits until a rollup commits without the test's mirror (the reload is done), so later test files meet the committed params. */
async function untilMirrorsOff(): Promise<void> {
  const started = Date.now();
  for (let n = 0; Date.now() - started < RELOAD_MS; n++) {
    const page = `${C}/settle-${n}`;
    const counterId = `${C}-settle-${n}-visits`;
    await db.doc(page).set({ stats: { visits: -1 } });
    await createParentAndShards(db, counterId, 1);
    await addToRandomShard(db, counterId, 1, { requestTtlMs: 60_000 });
    while ((await db.doc(`counters/${counterId}`).get()).get("total") !== 1 && Date.now() - started < RELOAD_MS) await sleep(200);
    if ((await db.doc(page).get()).get(FIELD) === -1) return;
  }
  throw new Error("the functions did not reload with the committed params");
}

/** One page of the extension app: what the extension left, and the value it stands for. */
interface Page {
  id: string;
  /** The page's document exists: old clients write only under such pages (the shipped rules), and its field mirrors the count. */
  exists: boolean;
  devices: string[];
  /** The field as the workers left it on the page (undefined: none). */
  field?: number;
  /** The extension's value of stats.visits, then plus every later write. */
  visits: number;
  /** stats.shares in the shards and partials: counted by no rule, so never touched. */
  shares: number;
  /** A page created after the move whose counter the app's own code made (createCounter). */
  made?: boolean;
}

async function extensionApp(random: () => number): Promise<Page[]> {
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const pages: Page[] = [];
  const writes: (() => Promise<unknown>)[] = [];
  for (let i = 0; i < PAGES; i++) {
    const page: Page = { id: `p${i}`, exists: false, devices: [], visits: 0, shares: 0 };
    const doc = `${C}/${page.id}`;
    pages.push(page);
    const shape = random();
    if (shape < 0.05) continue; // a page that never had a count (its counter appears only if an old client writes later)
    if (shape > 0.1) {
      // Most pages exist with the field the workers set; a few exist only through their shards.
      const field = random() < 0.9 ? int(0, 5000) : undefined;
      page.visits += field ?? 0;
      page.field = field;
      page.exists = true;
      writes.push(() => db.doc(doc).set({ title: page.id, stats: field === undefined ? { shares: 0 } : { visits: field, shares: 0 } }));
    }
    for (let s = int(0, 3); s > 0; s--) {
      const device = randomUUID();
      page.devices.push(device);
      for (let w = int(1, 3); w > 0; w--) {
        const n = int(1, 20);
        const shares = int(0, 2);
        page.visits += n;
        page.shares += shares;
        writes.push(() => incrementFields(db, doc, device, shares > 0 ? { [FIELD]: n, "stats.shares": shares } : { [FIELD]: n }));
      }
    }
    for (let p = int(0, 2); p > 0; p--) {
      const prefix = randomUUID().replace(/-/g, "").slice(0, int(1, 4));
      // A partial adds up to more than 0 (a worker subtracts only what it had added): a page's amounts never cancel out.
      const first = int(1, 30);
      const entries = [{ [FIELD]: first, "stats.shares": int(0, 1) }];
      if (random() < 0.5) entries.push({ [FIELD]: int(1 - first, 10), "stats.shares": 0 });
      for (const entry of entries) {
        page.visits += entry[FIELD];
        page.shares += entry["stats.shares"];
      }
      writes.push(() => workerPartial(db, doc, prefix, entries));
    }
  }
  for (let i = 0; i < ZERO_PAGES; i++) {
    // A page whose extension count is 0: the workers set the field to 0, and no shard is left.
    const page: Page = { id: `z${i}`, exists: true, devices: [], field: 0, visits: 0, shares: 0 };
    pages.push(page);
    writes.push(() => db.doc(`${C}/${page.id}`).set({ title: page.id, stats: { visits: 0, shares: 0 } }));
  }
  await withConcurrency(16, writes);
  return pages;
}

/**
 * Old app versions: `clients` devices writing their shards until stopped, each write recorded on its page,
 * only under pages that exist (what examples/rules/extension-pages.rules lets them do). `pages` may grow.
 */
function oldClients(pages: Page[], random: () => number, clients: number): { stop: () => Promise<number> } {
  let stopped = false;
  let count = 0;
  const loops = Array.from({ length: clients }, async () => {
    while (!stopped) {
      const open = pages.filter((p) => p.exists);
      const page = open[Math.floor(random() * open.length)]!;
      const device = page.devices.length > 0 && random() < 0.7 ? page.devices[Math.floor(random() * page.devices.length)]! : randomUUID();
      if (!page.devices.includes(device)) page.devices.push(device);
      const n = 1 + Math.floor(random() * 3);
      const shares = random() < 0.3 ? 1 : 0;
      await incrementFields(db, `${C}/${page.id}`, device, shares > 0 ? { [FIELD]: n, "stats.shares": shares } : { [FIELD]: n });
      page.visits += n;
      page.shares += shares;
      count++;
      // A few writes a second in all: the emulator delivers trigger events one at a time (docs/development.md).
      await sleep(100 + Math.floor(random() * 200));
    }
  });
  return {
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      return count;
    },
  };
}

function migrateExtension(extra: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  const tsx = pathToFileURL(join(REPO_ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;
  const args = ["--document", `${C}/{id}`, "--field", FIELD, "--counter", `${C}-{id}-visits`, "--project", E2E_PROJECT, "--concurrency", "8", ...extra];
  return runNode(["--import", tsx, join(REPO_ROOT, "cli", "src", "main.ts"), "migrate-extension", ...args]);
}

/** What a page shows and holds now: its counter, its field, and what its shards still hold. */
async function state(page: Page): Promise<{ id: string; sum: number | null; total: unknown; field: unknown; left: number; shares: number }> {
  const counter = await db.doc(`counters/${C}-${page.id}-visits`).get();
  const doc = await db.doc(`${C}/${page.id}`).get();
  let left = 0;
  let shares = 0;
  for (const shard of (await db.collection(`${C}/${page.id}/${SHARDS}`).get()).docs) {
    const entries = shard.id.startsWith("\t") ? ((shard.get("_updates_") as { _data_: { stats?: Record<string, number> } }[] | undefined) ?? []).map((e) => e._data_.stats ?? {}) : [(shard.get("stats") as Record<string, number> | undefined) ?? {}];
    for (const stats of entries) {
      left += stats.visits !== undefined ? 1 : 0;
      shares += stats.shares ?? 0;
    }
  }
  return {
    id: page.id,
    sum: counter.exists ? await shardSumIn(db, `${C}-${page.id}-visits`) : null,
    total: counter.get("total"),
    field: doc.exists ? doc.get(new FieldPath("stats", "visits")) : "no document",
    left,
    shares,
  };
}

/** What `state` must show once every write is folded and rolled up. */
function settled(page: Page): ReturnType<typeof state> extends Promise<infer S> ? S : never {
  // A page has a counter when it had a count (its field, even 0, or an amount) or was visited since.
  const counted = page.field !== undefined || page.visits !== 0 || page.made === true;
  return {
    id: page.id,
    sum: counted ? page.visits : null,
    total: counted ? page.visits : undefined,
    field: page.exists ? (counted ? page.visits : page.field) : "no document",
    left: 0,
    shares: page.shares,
  };
}

/**
 * New app versions: `users` signed-in users calling incrementCounter on pages that exist until stopped, each
 * call with a key of its own, retried with it when the answer was lost, so each is counted once on its page.
 * A page without a counter yet gets one from AUTO_CREATE on its first visit. `pages` may grow.
 */
function newClients(pages: Page[], users: Client[], random: () => number): { stop: () => Promise<number> } {
  let stopped = false;
  let count = 0;
  const loops = users.map(async (user) => {
    while (!stopped) {
      const open = pages.filter((p) => p.exists);
      const page = open[Math.floor(random() * open.length)]!;
      await visit(user, page, 1 + Math.floor(random() * 3));
      count++;
      await sleep(200 + Math.floor(random() * 300));
    }
  });
  return {
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      return count;
    },
  };
}

/**
 * One new client's visits (incrementCounter with a requestId), counted once on the page: a call whose answer
 * never came (no HTTP answer, or the SDK's deadline on a machine whose emulator queues events for a minute)
 * may have been applied, so it is sent again with the same key, which applies it at most once.
 */
async function visit(user: Client, page: Page, n: number): Promise<void> {
  const requestId = randomUUID();
  for (let attempt = 1; ; attempt++) {
    try {
      await user.call("incrementCounter", { counterId: `${C}-${page.id}-visits`, delta: n, requestId });
      page.visits += n;
      return;
    } catch (error) {
      const unanswered = isTransportFailure(error) || (error instanceof FunctionsError && error.code === "functions/deadline-exceeded");
      if (!unanswered || attempt >= 10) throw error;
      await sleep(200 * attempt);
    }
  }
}

/** `migrate-extension --dry-run`'s amount per document ("would move +N"), by page id. */
function dryRunAmounts(stdout: string): Map<string, number> {
  const amounts = new Map<string, number>();
  for (const match of stdout.matchAll(new RegExp(`^${C}/(\\S+) -> \\S+  would move ([+-]\\d+) `, "gm"))) amounts.set(match[1]!, Number(match[2]));
  return amounts;
}

it(`moves ${PAGES} extension counters exactly as the guide says, while old and new app versions write and pages are created after the move`, async () => {
  await withSeed("the extension app's migration", async (random) => {
    const phases: string[] = [];
    let phaseStart = Date.now();
    const phase = (name: string) => {
      phases.push(`${name} ${((Date.now() - phaseStart) / 1000).toFixed(1)} s`);
      phaseStart = Date.now();
    };
    const pages = await extensionApp(random);
    phase("the extension app written");

    // Step 2: the extension is uninstalled; old clients wait in their shards; the numbers are taken now,
    // before the fold trigger is deployed. Each page's dry-run value lies between its extension value
    // before the run and after it (old clients only add).
    const before = new Map(pages.map((p) => [p.id, p.visits]));
    const writing = oldClients(pages, random, 2);
    const dry = await migrateExtension(["--dry-run"]);
    await writing.stop();
    expect({ code: dry.code, stderr: dry.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining("Error") as string });
    const amounts = dryRunAmounts(dry.stdout);
    const outside = pages.filter((p) => {
      const amount = amounts.get(p.id);
      // A page without a count when the run started may have had its first visit before its turn or after.
      if (amount === undefined) return p.field !== undefined || before.get(p.id)! !== 0;
      return amount < before.get(p.id)! || amount > p.visits;
    });
    expect(outside.map((p) => ({ id: p.id, before: before.get(p.id), dryRun: amounts.get(p.id) ?? "no line", after: p.visits }))).toEqual([]);
    // The pages whose extension count is 0 are among them: their counters will be created.
    expect(pages.filter((p) => p.field === 0 && before.get(p.id) === 0).every((p) => amounts.has(p.id))).toBe(true);
    phase("the numbers taken");

    // Steps 1 and 3: MIRRORS onto the field, EXTENSION_COUNTERS and AUTO_CREATE deployed; the app's own code
    // (the admin entry, in this process) has the same values.
    params.set({ ...PARAMS, ...LOCAL_LOOP });
    Object.assign(process.env, PARAMS);
    const probe: Page = { id: "probe", exists: true, devices: ["probe-device"], visits: await untilFolding(), shares: 0 };
    await untilPublished(db, PARAMS);
    phase("reload");

    const during = oldClients(pages, random, 2);
    const run = await migrateExtension();
    let oldWrites = await during.stop();
    phase("migration");
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining("Error") as string });
    expect(run.stdout).toMatch(/; 0 not moved\n$/);

    // Step 4: new clients count in counters; pages are created after the move, their counters made by the
    // app's own code or by AUTO_CREATE, while old and new app versions visit old pages and new ones.
    const later = oldClients(pages, random, 2);
    let visiting: ReturnType<typeof newClients> | undefined;
    let newWrites = 0;
    try {
      const users = await Promise.all([signedInClient(), signedInClient()]);
      // A callable of the reloaded functions answers first: they published the params they run with, which
      // the app's own code (the admin entry) is compared with before it writes.
      await visit(users[0], pages.find((p) => p.id === "z0")!, 1);
      visiting = newClients(pages, users, random);
      for (let i = 0; i < NEW_PAGES; i++) {
        const page: Page = { id: `n${i}`, exists: true, devices: [], visits: 0, shares: 0 };
        await db.doc(`${C}/${page.id}`).set({ title: page.id });
        pages.push(page);
        if (i % 2 === 1) {
          // No code makes its counter: its first new visit does (AUTO_CREATE).
          await visit(users[1], page, 1);
          continue;
        }
        if (i % 4 === 2) {
          // An old client visits it first: the fold makes its counter, and the app's createCounter finds it.
          const device = randomUUID();
          page.devices.push(device);
          await incrementFields(db, `${C}/${page.id}`, device, { [FIELD]: 1 });
          page.visits += 1;
          oldWrites++;
          await untilCounter(page);
        }
        // The app's own function makes the page's counter when it creates the page (a new visit may have made it first).
        await adminEntry.createCounter(`${C}-${page.id}-visits`).catch((error: unknown) => {
          if (!(error instanceof adminEntry.CounterError && error.code === "already-exists")) throw error;
        });
        page.made = true;
      }
      await sleep(5_000);
    } finally {
      // Stopped on a failure too: no write may outlive the test.
      oldWrites += await later.stop();
      newWrites = (await visiting?.stop()) ?? 0;
    }
    phase("new pages and visits after it");
    expect(oldWrites).toBeGreaterThan(40);
    expect(newWrites).toBeGreaterThan(10);

    const all = [...pages, probe];
    const want = all.map(settled);
    const started = Date.now();
    let now = await Promise.all(all.map(state));
    while (JSON.stringify(now) !== JSON.stringify(want) && Date.now() - started < SETTLE_MS) {
      await sleep(1000);
      now = await Promise.all(all.map(state));
    }
    expect(now).toEqual(want);
    phase("settling");

    // A run after everything settled finds nothing left to move, and takes no field twice.
    const again = await migrateExtension();
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/: moved \+0 in 0; fields taken 0 \(\d+ before\)/);
    phase("second run");

    // No counter from nowhere: an old client's write under a page that does not exist (which the rules
    // refuse; here written with admin rights) stays in its shard, and no counter appears.
    await incrementFields(db, `${C}/ghost-after`, "ghost-device", { [FIELD]: 1 });
    await untilDrained();
    expect((await db.doc(`counters/${C}-ghost-after-visits`).get()).exists).toBe(false);
    expect((await db.doc(`${C}/ghost-after/${SHARDS}/ghost-device`).get()).get(FIELD)).toBe(1);
    console.log(`${oldWrites} old-client writes while migrating and after, ${newWrites} new-client calls; ${phases.join(", ")}`);
  });
});

/** Waits until an old client's visit to a new page made its counter (the fold trigger). */
async function untilCounter(page: Page): Promise<void> {
  const started = Date.now();
  while (!(await db.doc(`counters/${C}-${page.id}-visits`).get()).exists) {
    if (Date.now() - started > SETTLE_MS) throw new Error(`no counter for ${page.id}: the fold did not make it`);
    await sleep(250);
  }
}
