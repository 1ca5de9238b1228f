// The move from the firestore-counter extension, end to end (docs/from-the-extension.md): an app with 200
// extension counters laid out as the extension leaves them (test/helpers/extension.ts), the functions emulator
// serving EXTENSION_COUNTERS and MIRRORS onto the same field (functions/.env.local and a reload), old app
// versions writing their shards all along, `npm run migrate-extension` run while they write, and more
// writes after it. Every counter ends exactly at the extension's value plus every later write, nothing
// counted twice, the field on every page showing it, no amount left in a shard, and the shards' other
// fields as they were. Randomized: the seed is printed (EXTENSION_TEST_SEED=<seed> replays it).
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";
import { FieldPath } from "firebase-admin/firestore";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { runNode } from "../../test/helpers/run";
import { E2E_PROJECT, withConcurrency } from "../../test/helpers/client";
import { e2eAdminDb } from "../../test/helpers/admin";
import { requireEmulators, requireFunctionsEmulator } from "../../test/helpers/emulators";
import { shardSumIn } from "../../test/helpers/documents";
import { localParams, type LocalParams } from "../../test/helpers/local-params";
import { appCollection, incrementFields, SHARDS, withSeed, workerPartial } from "../../test/helpers/extension";
import { createCounter } from "../../functions/src/counters/create";
import { incrementCounter } from "../../functions/src/counters/increment";

jest.setTimeout(600_000);

const db = e2eAdminDb();
const C = appCollection("xapp");
const PAGES = 200;
const FIELD = "stats.visits";
const RELOAD_MS = 120_000;
const SETTLE_MS = 180_000;
let params: LocalParams;

beforeAll(async () => {
  await requireEmulators();
  await requireFunctionsEmulator();
  params = localParams(["EXTENSION_COUNTERS", "MIRRORS"]);
});

afterAll(async () => {
  // The emulator keeps a trigger registered after a reload drops it, and each of its queued events would
  // then boot a worker that fails: let the queue of this test's writes drain first (at most SETTLE_MS).
  await untilDrained();
  params.restore();
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
    await createCounter(db, counterId, 1);
    await incrementCounter(db, counterId, 1, { requestTtlMs: 60_000 });
    while ((await db.doc(`counters/${counterId}`).get()).get("total") !== 1 && Date.now() - started < RELOAD_MS) await sleep(200);
    if ((await db.doc(page).get()).get(FIELD) === -1) return;
  }
  throw new Error("the functions did not reload with the committed params");
}

/** One page of the extension app: what the extension left, and the value it stands for. */
interface Page {
  id: string;
  devices: string[];
  /** The field as the workers left it on the page (undefined: none). */
  field?: number;
  /** The extension's value of stats.visits, then plus every later write. */
  visits: number;
  /** stats.shares in the shards and partials: counted by no rule, so never touched. */
  shares: number;
}

async function extensionApp(random: () => number): Promise<Page[]> {
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const pages: Page[] = [];
  const writes: (() => Promise<unknown>)[] = [];
  for (let i = 0; i < PAGES; i++) {
    const page: Page = { id: `p${i}`, devices: [], visits: 0, shares: 0 };
    const doc = `${C}/${page.id}`;
    pages.push(page);
    const shape = random();
    if (shape < 0.05) continue; // a page that never had a count (its counter appears only if an old client writes later)
    if (shape > 0.1) {
      // Most pages exist with the field the workers set; a few exist only through their shards.
      const field = random() < 0.9 ? int(0, 5000) : undefined;
      page.visits += field ?? 0;
      page.field = field;
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
  await withConcurrency(16, writes);
  return pages;
}

/** Old app versions: `clients` devices writing their shards until stopped, each write recorded on its page. */
function oldClients(pages: Page[], random: () => number, clients: number): { stop: () => Promise<number> } {
  let stopped = false;
  let count = 0;
  const loops = Array.from({ length: clients }, async () => {
    while (!stopped) {
      const page = pages[Math.floor(random() * pages.length)]!;
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

function migrateExtension(): Promise<{ code: number; stdout: string; stderr: string }> {
  const tsx = pathToFileURL(join(REPO_ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;
  const args = ["--document", `${C}/{id}`, "--field", FIELD, "--counter", `${C}-{id}-visits`, "--project", E2E_PROJECT, "--concurrency", "8"];
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
function settled(page: Page, exists: boolean): ReturnType<typeof state> extends Promise<infer S> ? S : never {
  // Every amount is positive, so a page has a counter exactly when it has a count.
  const counted = page.visits !== 0;
  return {
    id: page.id,
    sum: counted ? page.visits : null,
    total: counted ? page.visits : undefined,
    field: exists ? (counted ? page.visits : page.field) : "no document",
    left: 0,
    shares: page.shares,
  };
}

it(`moves ${PAGES} extension counters exactly while old app versions keep writing, during the migration and after it`, async () => {
  await withSeed("the extension app's migration", async (random) => {
    const phases: string[] = [];
    let phaseStart = Date.now();
    const phase = (name: string) => {
      phases.push(`${name} ${((Date.now() - phaseStart) / 1000).toFixed(1)} s`);
      phaseStart = Date.now();
    };
    const pages = await extensionApp(random);
    const exists = new Map(await Promise.all(pages.map(async (p) => [p.id, (await db.doc(`${C}/${p.id}`).get()).exists] as const)));

    // The extension is uninstalled; the counters are deployed with EXTENSION_COUNTERS and MIRRORS onto the field.
    params.set({ EXTENSION_COUNTERS: `${C}/{id}:${FIELD}=${C}-{id}-visits`, MIRRORS: `${C}-{id}-visits=${C}/{id}:${FIELD}` });
    phase("the extension app written");
    const probe: Page = { id: "probe", devices: ["probe-device"], visits: await untilFolding(), shares: 0 };
    phase("reload");

    const during = oldClients(pages, random, 2);
    const run = await migrateExtension();
    const after = await during.stop();
    phase("migration");
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining("Error") as string });
    expect(run.stdout).toMatch(/; 0 not moved\n$/);

    const later = oldClients(pages, random, 2);
    await sleep(5_000);
    const writes = after + (await later.stop());
    phase("writes after it");
    expect(writes).toBeGreaterThan(40);

    const all = [...pages, probe];
    const want = all.map((p) => settled(p, p === probe ? false : exists.get(p.id)!));
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
    console.log(`${writes} old-client writes while migrating and after; ${phases.join(", ")}`);
  });
});
