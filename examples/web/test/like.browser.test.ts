// The example like button (examples/web) as a user meets it: built as `npm start` builds it, served by
// the same static server, opened in headless Chromium against the emulators.
// - Its own counter is unique (one like per user): a tap shows "liked" and count + 1 at once (while the
//   setMember call is still held back in the browser), settles exactly at the server's total; the next
//   tap unlikes the same way; a reload shows the right total and liked state.
// - On a plain counter, three taps show at once (every incrementCounter call held back), settle exactly
//   at the server's total with no value ever going back, and a reload shows the same total.
// - Each kind of counter gets its own text; a ?counter= that is no counter id is named; and the browser's
//   console shows no error, reloads included (the page no longer creates a counter that exists: that
//   was a red 409 on every reload).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import type { Page, Route } from "playwright-core";
import { packageBuildsIn } from "../../../scripts/lib/bundle";
import { launchChromium, type Chromium } from "../../../scripts/lib/chromium";
import { emulatorHosts } from "../../../scripts/lib/emulator-hosts";
import { buildExample, exampleConfig } from "../../../scripts/lib/example-web";
import { serveStatic, type RunningServer } from "../../../scripts/lib/static-server";
import { e2eAdminDb, waitFor } from "../../../test/helpers/admin";
import { E2E_PROJECT, signedInClient } from "../../../test/helpers/client";
import { requireEmulators, requireFunctionsEmulator } from "../../../test/helpers/emulators";

jest.setTimeout(180_000);

const db = e2eAdminDb();
let outDir: string;
let server: RunningServer;
let browser: Chromium;

beforeAll(async () => {
  await requireEmulators();
  await requireFunctionsEmulator();
  outDir = mkdtempSync(join(tmpdir(), "counter-example-"));
  const metafile = await buildExample(outDir);
  // The page bundles the client with the app's Firebase: one Firestore SDK in it.
  expect(packageBuildsIn(metafile, "@firebase/firestore")).toEqual(["index.esm.js"]);
  server = await serveStatic(outDir, exampleConfig(E2E_PROJECT, await emulatorHosts()));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (outDir !== undefined) rmSync(outDir, { recursive: true, force: true });
});

/** Every count the page rendered so far (window.__values). */
const rendered = (page: Page) => page.evaluate(() => (globalThis as unknown as { __values: (number | null)[] }).__values);
const shown = async (page: Page) => (await page.textContent("#count"))?.trim();
const serverTotal = async (counterId: string) => (await db.doc(`counters/${counterId}`).get()).get("total") as number | undefined;

/** Waits until the page has rendered a count (window.__values is set by the page once it is mounted). */
const firstRender = (page: Page) => page.waitForFunction(() => ((globalThis as unknown as { __values?: unknown[] }).__values?.length ?? 0) > 0);

/** Opens the page on a counter and waits until it renders its first count. */
async function open(page: Page, counterId: string): Promise<void> {
  await page.goto(`${server.url}?counter=${counterId}`);
  await firstRender(page);
}

/** The values as a user saw them change: repeats of the same number (a new snapshot with the same count) dropped. */
const changes = (values: (number | null)[]) => values.filter((v, i) => i === 0 || v !== values[i - 1]);

/** Holds every POST to the callable `name` in the browser until the test continues it (preflights pass). */
async function holdCalls(page: Page, name: string): Promise<Route[]> {
  const held: Route[] = [];
  await page.route(`**/${name}`, (route) => (route.request().method() === "POST" ? void held.push(route) : route.continue()));
  return held;
}

const liked = async (page: Page) => [await page.getAttribute("#like", "aria-pressed"), await page.isVisible("#liked")];

/** A new page that records uncaught exceptions and every error the browser's console shows (failed requests included). */
async function recordedPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`);
  });
  return { page, errors };
}

/**
 * "N today" is on the real clock's UTC day (the functions emulator's and the browser's), which a test
 * cannot move: a test never starts in the last 3 minutes before a UTC midnight (it waits past it), so the
 * day cannot change under it, whatever the hour it runs.
 */
beforeEach(async () => {
  const left = 86_400_000 - (Date.now() % 86_400_000);
  if (left < 180_000) await new Promise((resolve) => setTimeout(resolve, left + 1_000));
}, 200_000);

describe("the example like button", () => {
  it("creates its counter as a unique counter; a tap likes (liked and count + 1 at once), the next unlikes, each settles exactly, and a reload shows both", async () => {
    const counterId = `web-unique-${randomUUID().slice(0, 8)}`;
    const { page, errors } = await recordedPage();
    const held = await holdCalls(page, "setMember");
    const settled = async () => `${await shown(page)} (${await page.textContent("#pending")})`;

    await open(page, counterId);
    expect(changes(await rendered(page))).toEqual([0]);
    expect((await db.doc(`counters/${counterId}`).get()).get("unique")).toBe(true);
    expect(await liked(page)).toEqual(["false", false]);
    expect(await page.textContent("#about")).toContain("This is a unique counter, so a like counts once per user");

    for (const [tap, count, isLiked] of [
      [1, 1, true],
      [2, 0, false],
      [3, 1, true],
    ] as const) {
      await page.click("#like");
      // At once: the call has not reached the server.
      expect(await shown(page)).toBe(String(count));
      expect(await liked(page)).toEqual([String(isLiked), isLiked]);
      await waitFor(() => Promise.resolve(held.length), tap, 30_000);
      expect(await page.textContent("#pending")).toBe(`your ${isLiked ? "like" : "unlike"} is on the way to the server`);
      expect(await serverTotal(counterId)).toBe(1 - count);
      await held[tap - 1]!.continue();
      expect((await waitFor(() => serverTotal(counterId), count, 30_000)).value).toBe(count);
      expect((await waitFor(settled, `${count} ()`, 30_000)).value).toBe(`${count} ()`);
      expect(await liked(page)).toEqual([String(isLiked), isLiked]);
    }
    // Never more than one like of this user, never below zero, no flicker back between taps.
    expect(changes(await rendered(page))).toEqual([0, 1, 0, 1]);
    // The page's counter is windowed too: "1 today" (the like, the unlike and the like again, today).
    expect((await db.doc(`counters/${counterId}`).get()).get("windowed")).toBe(true);
    expect((await waitFor(async () => (await page.textContent("#today"))?.trim(), "1 today", 30_000)).value).toBe("1 today");
    expect(await page.textContent("#status")).toBe("");

    await page.reload(); // the same anonymous user (Auth keeps it in the browser)
    await firstRender(page);
    expect(changes(await rendered(page))).toEqual([1]);
    expect(await liked(page)).toEqual(["true", true]);
    await page.reload(); // and once more: an existing counter is read, never created again (no 409)
    await firstRender(page);
    expect(changes(await rendered(page))).toEqual([1]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("on a plain counter, shows each tap at once, settles exactly at the server total without going back, and shows it after a reload", async () => {
    const counterId = `web-plain-${randomUUID().slice(0, 8)}`;
    const creator = await signedInClient();
    await creator.call("createCounter", { counterId, unique: false });
    await creator.close();
    const { page, errors } = await recordedPage();

    // Hold every incrementCounter call in the browser until the taps have been seen: the number can
    // then only have moved optimistically. (Preflight OPTIONS requests pass.)
    const held = await holdCalls(page, "incrementCounter");

    await open(page, counterId);
    expect(changes(await rendered(page))).toEqual([0]);
    expect(await serverTotal(counterId)).toBe(0);
    const about = await page.textContent("#about");
    expect(about).toContain("This is a plain counter: every tap adds one");
    expect(about).not.toContain("This is a unique counter");

    for (let tap = 1; tap <= 3; tap++) {
      await page.click("#like");
      expect(await shown(page)).toBe(String(tap)); // at once: no call has reached the server
    }
    await waitFor(() => Promise.resolve(held.length), 3, 30_000);
    expect(held).toHaveLength(3);
    expect(await page.textContent("#pending")).toBe("3 on the way to the server");
    expect(await serverTotal(counterId)).toBe(0);

    for (const route of held) await route.continue();
    expect((await waitFor(() => serverTotal(counterId), 3, 30_000)).value).toBe(3);
    // Settled: the page shows the server's total with nothing of its own pending (its last render has
    // total 3 behind it), and every value it ever rendered only went up.
    const settled = async () => `${await shown(page)} (${await page.textContent("#pending")})`;
    expect((await waitFor(settled, "3 ()", 30_000)).value).toBe("3 ()");
    expect(changes(await rendered(page))).toEqual([0, 1, 2, 3]);
    expect(await page.textContent("#status")).toBe("");

    await page.reload();
    await firstRender(page);
    expect(changes(await rendered(page))).toEqual([3]);
    expect(await shown(page)).toBe("3");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("names a ?counter= that is no counter id, instead of blaming the emulators, and starts nothing", async () => {
    const { page, errors } = await recordedPage();
    const calls: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(server.url)) calls.push(request.url());
    });
    await page.goto(`${server.url}?counter=${encodeURIComponent("posts/42 likes")}`);
    await page.waitForSelector("#status:not(:empty)");
    const status = await page.textContent("#status");
    expect(status).toBe('"posts/42 likes" is not a counter id: ?counter= takes 1-128 characters of A-Z, a-z, 0-9, _ or -.');
    expect(status).not.toContain("emulators");
    expect(await page.isDisabled("#like")).toBe(true);
    expect(calls).toEqual([]); // no sign-in, no callable, no listener
    expect(errors).toEqual([]);
    await page.close();
  });
});
