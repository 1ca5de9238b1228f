// The React example (examples/react) as users meet it: built by Vite as `npm start` builds it, served by
// the same static server, opened by two users, each in a browser of their own (headless Chromium), against
// the emulators. Each post has a like button (useLike) and "views today" (useCounter, window "today").
// - Both pages show each post's count and views today exactly: one view per user and page load.
// - A double tap likes and unlikes, a triple tap ends liked; each tap shows at once; another user's like
//   shows on the other page; a tap made while the browser is offline shows at once and counts once when it
//   is back online; sign-out shows the count without "liked", a tap then says to sign in; a new user's like
//   counts.
// - At the end, and after every step, the numbers settle at the server's total, which equals the member
//   documents and covers every change; no page ever showed a count outside what two users can make; the
//   browsers' consoles show no error but a 409 while both pages create the counters, and failed requests
//   while offline.
// - Comments (with the feed's rules, examples/rules/feed-comments.rules, as npm start loads them): two users
//   add comments at once and delete their own; each page's "N comments", the document counter of the post,
//   settles at the number of comment documents, and so does the server's total; only the author sees a
//   delete button; signed out, a comment is refused before anything is written.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import type { Page } from "playwright-core";
import { launchChromium, type Chromium } from "../../../scripts/lib/chromium";
import { emulatorHosts } from "../../../scripts/lib/emulator-hosts";
import { buildReactExample, feedConfig, loadRules } from "../../../scripts/lib/example-react";
import { REPO_ROOT } from "../../../scripts/lib/firebase-cli";
import { serveStatic, type RunningServer } from "../../../scripts/lib/static-server";
import { e2eAdminDb, waitFor } from "../../../test/helpers/admin";
import { E2E_PROJECT, functionsErrorCode, signedInClient } from "../../../test/helpers/client";
import { firestoreHost, requireEmulators, requireFunctionsEmulator } from "../../../test/helpers/emulators";

jest.setTimeout(300_000);

const db = e2eAdminDb();
let outDir: string;
let server: RunningServer;
const browsers: Chromium[] = [];

beforeAll(async () => {
  await requireEmulators();
  await requireFunctionsEmulator();
  outDir = mkdtempSync(join(tmpdir(), "counter-react-example-"));
  await buildReactExample(outDir);
  // The functions the pages call, each once, one at a time: a cold emulator boots a worker per call in
  // flight, which a loaded machine may not finish in time.
  const warm = await signedInClient();
  const counterId = `warm-${randomUUID().slice(0, 8)}`;
  await warm.call("createCounter", { counterId, unique: true });
  await warm.call("setMember", { counterId, member: true });
  await warm.call("createCounter", { counterId: `${counterId}-views`, windowed: true });
  await warm.call("incrementCounter", { counterId: `${counterId}-views`, delta: 1, requestId: randomUUID() });
  await warm.close();
  server = await serveStatic(outDir, feedConfig(E2E_PROJECT, await emulatorHosts()));
  await loadRules(firestoreHost(), E2E_PROJECT);
}, 300_000);

afterAll(async () => {
  // The project's own rules again, as firebase.json gave them, for the tests that come after.
  await loadRules(firestoreHost(), E2E_PROJECT, join(REPO_ROOT, "firestore.rules"));
  for (const browser of browsers) await browser.close();
  await server?.close();
  if (outDir !== undefined) rmSync(outDir, { recursive: true, force: true });
});

/**
 * "Views today" is on the real clock's UTC day, which a test cannot move: it never starts in the last 5
 * minutes before a UTC midnight (it waits past it), so the day cannot change under it.
 */
beforeEach(async () => {
  const left = 86_400_000 - (Date.now() % 86_400_000);
  if (left < 300_000) await new Promise((resolve) => setTimeout(resolve, left + 1_000));
}, 400_000);

/**
 * Run in each page before its own scripts: appends each post's like count to window.__counts[post], and
 * its comment count to window.__counts["<post>:comments"], whenever it changes.
 */
const RECORD_COUNTS = `
  const counts = (window.__counts = {});
  const record = (key, text) => {
    const seen = (counts[key] ??= []);
    if (seen.at(-1) !== text) seen.push(text);
  };
  new MutationObserver(() => {
    for (const post of document.querySelectorAll("article[data-post]")) {
      record(post.dataset.post, post.querySelector(".count")?.textContent ?? "");
      record(post.dataset.post + ":comments", post.querySelector(".comment-count")?.textContent ?? "");
    }
  }).observe(document, { subtree: true, childList: true, characterData: true });
`;

/**
 * When a browser's console may show errors: while both pages open the feed at once (one page's
 * createCounter may find the counter made by the other: a 409 the browser logs), while offline (failed
 * requests), or never (the rest).
 */
type Moment = "opening" | "offline" | "the rest";

interface User {
  name: string;
  browser: Chromium;
  page: Page;
  /** Console errors and uncaught exceptions, with the moment they came in. */
  errors: { text: string; during: Moment }[];
  during: Moment;
}

/** A user in a browser of their own, whose page records every count it renders (window.__counts, per post). */
async function newUser(name: string): Promise<User> {
  const browser = await launchChromium();
  browsers.push(browser);
  await browser.context.addInitScript({ content: RECORD_COUNTS });
  const page = await browser.context.newPage();
  const user: User = { name, browser, page, errors: [], during: "the rest" };
  page.on("pageerror", (error) => user.errors.push({ text: error.message, during: user.during }));
  page.on("console", (message) => {
    if (message.type() === "error") user.errors.push({ text: message.text(), during: user.during });
  });
  return user;
}

const post = (page: Page, id: string) => page.locator(`article[data-post="${id}"]`);
/** What a post's like button shows: its count and whether it is pressed ("liked"). */
async function likeShown(page: Page, id: string): Promise<string> {
  const button = post(page, id).locator("button.like");
  return `${await button.locator(".count").textContent()}${(await button.getAttribute("aria-pressed")) === "true" ? " liked" : ""}`;
}
/** Waits until the post's like button shows `expected` ("2 liked", "0"); returns what it shows then. */
async function showsLike(page: Page, id: string, expected: string): Promise<string> {
  return (await waitFor(() => likeShown(page, id), expected, 30_000)).value;
}
const viewsShown = async (page: Page, id: string) => (await post(page, id).locator(".views").textContent())?.trim();
const uidOf = async (page: Page) => /as (\S+)\./.exec((await page.textContent(".account")) ?? "")?.[1];

/** What a user's membership record must say once their taps reached the server: the last tap, and whether it followed another. */
type Settled = Record<string, { member: boolean; afterAnother?: boolean }>;

/**
 * The server's likes once the users' taps have reached it (each membership record as `records` says) and
 * its total covers every change (rollup.readTime at or after each record's changedAt), with the member
 * documents counted: both, which must be equal.
 */
async function serverLikes(counterId: string, records: Settled): Promise<{ total: number; members: number }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const snaps = await db.getAll(...Object.keys(records).map((uid) => db.doc(`counters/${counterId}/memberships/${uid}`)));
    const arrived = snaps.every((snap) => {
      const wanted = records[snap.id]!;
      const changedTwice = snap.get("previousChangedAt") !== null && snap.get("previousChangedAt") !== undefined;
      return snap.exists && snap.get("member") === wanted.member && snap.get("changedAt") !== null && (wanted.afterAnother !== true || changedTwice);
    });
    const all = await db.collection(`counters/${counterId}/memberships`).get();
    const counter = await db.doc(`counters/${counterId}`).get();
    const readTime = counter.get("rollup.readTime") as FirebaseFirestore.Timestamp | undefined;
    const covered = all.docs.every((record) => {
      const changedAt = record.get("changedAt") as FirebaseFirestore.Timestamp | null;
      return changedAt !== null && readTime !== undefined && readTime.toMillis() >= changedAt.toMillis();
    });
    if ((arrived && covered) || Date.now() > deadline) {
      const members = (await db.collection(`counters/${counterId}/members`).count().get()).data().count;
      return { total: counter.get("total") as number, members };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("the React example's feed", () => {
  it("two users like and unlike, with double taps, an offline tap and a sign-out: every number settles at the server's total", async () => {
    const [p1, p2] = [randomUUID().slice(0, 8), randomUUID().slice(0, 8)];
    const [likes1, likes2] = [`post-${p1}-likes`, `post-${p2}-likes`];
    const a = await newUser("A");
    const b = await newUser("B");
    const url = `${server.url}?posts=${p1},${p2}`;

    // Both open the feed at once: the counters are created once (the other page finds them made), each
    // post shows 0 likes, and each page load is a view.
    a.during = b.during = "opening";
    await Promise.all([a.page.goto(url), b.page.goto(url)]);
    for (const user of [a, b]) for (const id of [p1, p2]) expect(await showsLike(user.page, id, "0")).toBe("0");
    a.during = b.during = "the rest";
    for (const user of [a, b]) for (const id of [p1, p2]) expect((await waitFor(() => viewsShown(user.page, id), "2 views today", 30_000)).value).toBe("2 views today");
    for (const id of [p1, p2]) {
      const views = await db.doc(`counters/post-${id}-views`).get();
      expect([views.get("total"), views.get("windowed")]).toEqual([2, true]);
      expect((await db.doc(`counters/${`post-${id}-likes`}`).get()).get("unique")).toBe(true);
    }
    const [uidA, uidB] = [await uidOf(a.page), await uidOf(b.page)];
    expect(uidA).toMatch(/^\w+$/);
    expect(uidB).not.toBe(uidA);

    // A double-taps: like, then unlike. Each shows at once; the last tap decides.
    await post(a.page, p1).locator("button.like").dblclick();
    expect(await likeShown(a.page, p1)).toBe("0");
    expect(await serverLikes(likes1, { [uidA!]: { member: false, afterAnother: true } })).toEqual({ total: 0, members: 0 });

    // B likes; A sees it, then likes too.
    await post(b.page, p1).locator("button.like").click();
    expect(await likeShown(b.page, p1)).toBe("1 liked");
    expect(await showsLike(a.page, p1, "1")).toBe("1");
    await post(a.page, p1).locator("button.like").click();
    expect(await likeShown(a.page, p1)).toBe("2 liked");
    expect(await serverLikes(likes1, { [uidA!]: { member: true }, [uidB!]: { member: true } })).toEqual({ total: 2, members: 2 });
    expect(await showsLike(b.page, p1, "2 liked")).toBe("2 liked");
    expect(await showsLike(a.page, p1, "2 liked")).toBe("2 liked");

    // A taps while offline: the unlike shows at once, reaches the server once A is back, and counts once.
    a.during = "offline";
    await a.browser.context.setOffline(true);
    await post(a.page, p1).locator("button.like").click();
    expect(await likeShown(a.page, p1)).toBe("1");
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await db.doc(`counters/${likes1}`).get()).get("total")).toBe(2);
    expect(await likeShown(b.page, p1)).toBe("2 liked");
    expect(await likeShown(a.page, p1)).toBe("1");
    await a.browser.context.setOffline(false);
    expect(await serverLikes(likes1, { [uidA!]: { member: false } })).toEqual({ total: 1, members: 1 });
    a.during = "the rest";
    expect(await showsLike(a.page, p1, "1")).toBe("1");
    expect(await showsLike(b.page, p1, "1 liked")).toBe("1 liked");

    // On the second post, A triple-taps (liked at the end) while B double-taps (not liked at the end).
    await post(a.page, p2).locator("button.like").click({ clickCount: 3 });
    await post(b.page, p2).locator("button.like").dblclick();
    const twice = { member: false, afterAnother: true };
    expect(await serverLikes(likes2, { [uidA!]: { member: true, afterAnother: true }, [uidB!]: twice })).toEqual({ total: 1, members: 1 });
    expect(await showsLike(a.page, p2, "1 liked")).toBe("1 liked");
    expect(await showsLike(b.page, p2, "1")).toBe("1");

    // A signs out: the counts stay, nothing is liked, and a tap says to sign in (nothing sent).
    await a.page.click("button.sign-out");
    expect(await showsLike(a.page, p2, "1")).toBe("1");
    expect(await likeShown(a.page, p1)).toBe("1");
    await post(a.page, p2).locator("button.like").click();
    await a.page.waitForSelector('article .error:has-text("Sign in to like.")');
    expect(await likeShown(a.page, p2)).toBe("1");

    // A signs in again, as a new anonymous user: not liked yet; a like counts.
    await a.page.click("button.sign-in");
    await a.page.waitForSelector("button.sign-out");
    expect(await uidOf(a.page)).not.toBe(uidA);
    expect(await showsLike(a.page, p2, "1")).toBe("1");
    await post(a.page, p2).locator("button.like").click();
    expect(await likeShown(a.page, p2)).toBe("2 liked");
    const newUid = (await uidOf(a.page))!;
    expect(await serverLikes(likes2, { [newUid]: { member: true } })).toEqual({ total: 2, members: 2 });
    expect(await showsLike(b.page, p2, "2")).toBe("2");

    // What each page ever rendered: counts two users can make, nothing else (no like counted twice).
    for (const user of [a, b]) {
      const counts = await user.page.evaluate(() => (globalThis as unknown as { __counts: Record<string, string[]> }).__counts);
      for (const id of [p1, p2]) expect(counts[id]!.filter((text) => !["…", "0", "1", "2"].includes(text))).toEqual([]);
    }
    for (const user of [a, b]) {
      expect(user.errors.filter((error) => error.during === "the rest")).toEqual([]);
      const opening = user.errors.filter((error) => error.during === "opening").map((error) => error.text);
      expect(opening.filter((text) => !text.includes("status of 409 (Conflict)"))).toEqual([]);
    }
  });

  it("two users comment at once and delete their own: each post's comment count settles at its comment documents", async () => {
    const id = randomUUID().slice(0, 8);
    const counterId = `post-${id}-comments`;
    const a = await newUser("A");
    const b = await newUser("B");
    const url = `${server.url}?posts=${id}`;
    a.during = b.during = "opening";
    await Promise.all([a.page.goto(url), b.page.goto(url)]);
    for (const user of [a, b]) expect(await showsComments(user.page, id, "0 comments")).toBe("0 comments");
    a.during = b.during = "the rest";

    // A comments twice while B comments once, all at once: each page lists the three and counts 3.
    await Promise.all([comment(a.page, id, "one").then(() => comment(a.page, id, "two")), comment(b.page, id, "three")]);
    for (const user of [a, b]) {
      expect(await showsComments(user.page, id, "3 comments")).toBe("3 comments");
      expect(await post(user.page, id).locator(".comment .text").allTextContents()).toEqual(expect.arrayContaining(["one", "two", "three"]));
    }
    expect(await serverComments(id, 3)).toEqual({ total: 3, documents: 3 });

    // Only the author has a delete button; A deletes "one", and both pages count 2.
    expect(await post(a.page, id).locator(".comment .delete").count()).toBe(2);
    expect(await post(b.page, id).locator(".comment .delete").count()).toBe(1);
    await post(a.page, id).locator(".comment", { hasText: "one" }).locator(".delete").click();
    for (const user of [a, b]) expect(await showsComments(user.page, id, "2 comments")).toBe("2 comments");
    expect(await serverComments(id, 2)).toEqual({ total: 2, documents: 2 });

    // Signed out, a comment is refused on the page: nothing is written, the count stays.
    await a.page.click("button.sign-out");
    await post(a.page, id).locator(".comment-text").fill("four");
    await post(a.page, id).locator("button.add-comment").click();
    await a.page.waitForSelector('article .error:has-text("Sign in to comment.")');
    expect((await db.collection(`posts/${id}/comments`).count().get()).data().count).toBe(2);
    expect(await showsComments(a.page, id, "2 comments")).toBe("2 comments");

    // The callables cannot move it: only its comments do.
    const caller = await signedInClient();
    expect(await functionsErrorCode(caller.call("incrementCounter", { counterId, delta: 5 }))).toBe("functions/failed-precondition");
    await caller.close();
    expect(await serverComments(id, 2)).toEqual({ total: 2, documents: 2 });

    // What each page ever rendered: counts of 0 to 3 comments, nothing else (no comment counted twice).
    for (const user of [a, b]) {
      const counts = await user.page.evaluate(() => (globalThis as unknown as { __counts: Record<string, string[]> }).__counts);
      expect(counts[`${id}:comments`]!.filter((text) => !["", "…", "0 comments", "1 comment", "2 comments", "3 comments"].includes(text))).toEqual([]);
      expect(user.errors.filter((error) => error.during === "the rest")).toEqual([]);
      const opening = user.errors.filter((error) => error.during === "opening").map((error) => error.text);
      expect(opening.filter((text) => !text.includes("status of 409 (Conflict)"))).toEqual([]);
    }
  });
});

/** What a post's comment count shows ("3 comments"). */
const commentsShown = async (page: Page, id: string) => (await post(page, id).locator(".comment-count").textContent())?.trim();
/** Waits until the post's comment count shows `expected`; returns what it shows then. */
async function showsComments(page: Page, id: string, expected: string): Promise<string | undefined> {
  return (await waitFor(() => commentsShown(page, id), expected, 30_000)).value;
}

/** Writes a comment from the page's form, and waits until the page lists it. */
async function comment(page: Page, id: string, text: string): Promise<void> {
  await post(page, id).locator(".comment-text").fill(text);
  await post(page, id).locator("button.add-comment").click();
  await post(page, id).locator(".comment .text", { hasText: text }).waitFor();
}

/**
 * The server's count of the post's comments once its total is `expected` (or after 60 s, whatever it is
 * then), with the comment documents counted: both, which must be equal.
 */
async function serverComments(id: string, expected: number): Promise<{ total: number | undefined; documents: number }> {
  const counter = db.doc(`counters/post-${id}-comments`);
  const { value } = await waitFor(async () => (await counter.get()).get("total") as number | undefined, expected, 60_000);
  const documents = (await db.collection(`posts/${id}/comments`).count().get()).data().count;
  return { total: value, documents };
}
