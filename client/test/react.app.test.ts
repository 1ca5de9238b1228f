// The React hooks as an app gets them: the packed client installed with firebase and React 18, and again
// with React 19 (react, react-dom and @types/react of that major), in fresh apps outside the repository.
// - Server rendering (renderToString, in Node): "pending" for useCounter and useLike, and nothing opened:
//   the client's own count of listeners stays 0 and no Auth instance is made.
// - In headless Chromium, in strict mode, against the emulators: every hook shows the server's exact
//   numbers; components watching one counter through one client share one listener (the client's
//   registry's count: before mount, after mount, after unmount, 0 again); taps (held in the browser)
//   show at once in every component of the counter and settle at the server's total; a double toggle
//   counts as the client counts it (the last tap decides); useLike follows sign-in and sign-out, and
//   rejects a like when signed out with the client's SignInRequiredError.
// - The hooks' types check under module nodenext with the app's @types/react.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import type { Page, Route } from "playwright-core";
import { bundleBrowserApp, packageBuildsIn } from "../../scripts/lib/bundle";
import { launchChromium, type Chromium } from "../../scripts/lib/chromium";
import { emulatorHosts, type EmulatorHosts } from "../../scripts/lib/emulator-hosts";
import { functionsRegion } from "../../scripts/lib/example-web";
import { REPO_ROOT } from "../../scripts/lib/firebase-cli";
import { serveStatic, type RunningServer } from "../../scripts/lib/static-server";
import { packedTarballs } from "../../test/helpers/packed";
import { run } from "../../test/helpers/run";
import { e2eAdminDb, waitFor } from "../../test/helpers/admin";
import { E2E_PROJECT, signedInClient, type Client } from "../../test/helpers/client";
import { installFreshApp } from "../../test/helpers/client-app";

// Two installs of firebase and React and a browser run each.
jest.setTimeout(600_000);

const FIREBASE_VERSION = (JSON.parse(readFileSync(require.resolve("firebase/package.json", { paths: [REPO_ROOT] }), "utf8")) as { version: string }).version;
const db = e2eAdminDb();
let work: string;
let hosts: EmulatorHosts;
let admin: Client;
let fan: Client;
const VIEWS = 3;

const serverTotal = async (counterId: string) => (await db.doc(`counters/${counterId}`).get()).get("total") as number | undefined;

beforeAll(async () => {
  hosts = await emulatorHosts();
  [admin, fan] = await Promise.all([signedInClient({ admin: true }), signedInClient()]);
  work = mkdtempSync(join(tmpdir(), "counter-react-"));
});

/** Counters of one run: likes (unique) with two members, views (windowed) with VIEWS, and an id that is no counter. */
async function counters(): Promise<{ likes: string; views: string; missing: string; players: [string, string] }> {
  const [likes, views, missing] = ["likes", "views", "missing"].map((name) => `react-${name}-${randomUUID().slice(0, 8)}`) as [string, string, string];
  // Two players on the repository's leaderboard (functions/.env: players=player-{id}-points), at 5 and 3.
  const tag = randomUUID().slice(0, 8);
  const players: [string, string] = [`player-react${tag}a-points`, `player-react${tag}b-points`];
  for (const [i, player] of players.entries()) {
    await admin.call("createCounter", { counterId: player });
    await admin.call("incrementCounter", { counterId: player, delta: i === 0 ? 5 : 3, requestId: randomUUID() });
  }
  await admin.call("createCounter", { counterId: likes, unique: true });
  await admin.call("createCounter", { counterId: views, windowed: true });
  await admin.call("setMember", { counterId: likes, member: true });
  await fan.call("setMember", { counterId: likes, member: true });
  for (let i = 0; i < VIEWS; i++) await admin.call("incrementCounter", { counterId: views, requestId: randomUUID() });
  expect((await waitFor(() => serverTotal(likes), 2, 30_000)).value).toBe(2);
  expect((await waitFor(() => serverTotal(views), VIEWS, 30_000)).value).toBe(VIEWS);
  expect((await waitFor(() => serverTotal(players[1]), 3, 30_000)).value).toBe(3);
  return { likes, views, missing, players };
}

/** A player's rank as the server's totals say (every counter on the board `players`), as useRank shows it. */
async function rankShown(counterId: string): Promise<string> {
  const totals = (await db.collection("counters").where("board", "==", "players").get()).docs.map((d) => [d.id, d.get("total") as number] as const);
  const total = totals.find(([id]) => id === counterId)![1];
  return `success|${JSON.stringify({ rank: 1 + totals.filter(([, t]) => t > total).length, of: totals.length, total })}|`;
}

afterAll(async () => {
  await Promise.all([admin?.close(), fan?.close()]);
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

/** A fresh app with the packed client, the project's firebase and React `major`. */
async function reactApp(major: number): Promise<string> {
  const tarball = (await packedTarballs()).client;
  const packages = [tarball, `firebase@${FIREBASE_VERSION}`, `react@${major}`, `react-dom@${major}`, `@types/react@${major}`];
  const dir = await installFreshApp(join(work, `react-${major}`), join(REPO_ROOT, "test", "fixtures", "client-react-app"), packages);
  const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> };
  expect(lock.packages["node_modules/react"]?.version).toMatch(new RegExp(`^${major}\\.`));
  return dir;
}

describe.each([18, 19])("the hooks with React %i", (major) => {
  let dir: string;
  let likes: string;
  let views: string;
  let missing: string;
  let players: [string, string];
  beforeAll(async () => {
    dir = await reactApp(major);
    ({ likes, views, missing, players } = await counters());
  });

  it("type-check: useCounter, useLike, CounterClientProvider and their types (module nodenext)", async () => {
    const tsc = require.resolve("typescript/bin/tsc", { paths: [REPO_ROOT] });
    const result = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir });
    expect({ code: result.code, output: `${result.stdout}${result.stderr}` }).toEqual({ code: 0, output: "" });
  });

  it('render on a server as "pending", and open nothing: no listener, no Auth', async () => {
    const config = { projectId: E2E_PROJECT, region: functionsRegion(), emulators: hosts, likes, views };
    const result = await run(process.execPath, ["ssr.mjs"], { cwd: dir, env: { ...process.env, APP_CONFIG: JSON.stringify(config) } });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const printed = JSON.parse(result.stdout) as { react: string; html: string; listening: unknown; auth: boolean };
    expect(printed.react).toMatch(new RegExp(`^${major}\\.`));
    expect(printed.html).toBe("<p>views today: pending</p><p>likes: pending</p><p>total: pending</p>");
    const none = { counters: 0, watchers: 0 };
    expect(printed.listening).toEqual({ watch: none, watchMember: none });
    expect(printed.auth).toBe(false);
  });

  describe("in the browser, in strict mode, against the emulators", () => {
    let server: RunningServer;
    let browser: Chromium;
    let page: Page;
    const errors: string[] = [];
    const email = `react-${major}-${randomUUID().slice(0, 8)}@example.com`;

    beforeAll(async () => {
      const metafile = await bundleBrowserApp({ entry: join(dir, "page.mjs"), outfile: join(dir, "bundle.js"), absWorkingDir: dir });
      // One Firestore SDK, and one React: the hooks use the app's.
      expect(packageBuildsIn(metafile, "@firebase/firestore")).toEqual(["index.esm.js"]);
      expect(Object.keys(metafile.inputs).filter((input) => /node_modules\/react\/index\.js$/.test(input))).toEqual(["node_modules/react/index.js"]);
      server = await serveStatic(dir, { projectId: E2E_PROJECT, region: functionsRegion(), emulators: hosts });
      browser = await launchChromium();
      page = await browser.context.newPage();
      page.on("pageerror", (error) => errors.push(error.message));
      page.on("console", (message) => {
        if (message.type() === "error") errors.push(`console: ${message.text()}`);
      });
      await page.goto(server.url);
      await page.waitForFunction(() => (globalThis as unknown as { __ready?: boolean }).__ready === true);
    });

    afterAll(async () => {
      await browser?.close();
      await server?.close();
    });

    /** Calls a method of the page's window.__harness with `args` (JSON values), in the page. */
    const harness = <T>(method: string, ...args: unknown[]) =>
      page.evaluate(
        ({ method, args }) => (globalThis as unknown as { __harness: Record<string, (...args: unknown[]) => T> }).__harness[method]!(...args),
        { method, args },
      );
    const listening = () => harness<{ watch: { counters: number; watchers: number }; watchMember: { counters: number; watchers: number } }>("listening");
    const shown = (name: string) => page.textContent(`#${name}`);
    /** Waits until every named component shows `text`; returns what each shows. */
    async function showing(names: string[], text: string): Promise<Record<string, string | null>> {
      await page
        .waitForFunction(
          ({ names, text }) => {
            const page = globalThis as unknown as { document: { getElementById(id: string): { textContent: string | null } | null } };
            return names.every((name) => page.document.getElementById(name)?.textContent === text);
          },
          { names, text },
          { timeout: 30_000 },
        )
        .catch(() => undefined);
      return Object.fromEntries(await Promise.all(names.map(async (name) => [name, await shown(name)] as const)));
    }
    const all = (names: string[], text: string) => Object.fromEntries(names.map((name) => [name, text]));
    const LIKES = ["like-a", "like-b", "like-outside"];
    const VIEWERS = ["views", "views-today", "views-outside"];

    /** Holds every POST to the callable `name` in the page until the test releases them (and stops holding). */
    async function holdCalls(name: string): Promise<{ held: Route[]; release: () => Promise<void> }> {
      const held: Route[] = [];
      const pattern = `**/${name}`;
      const handler = (route: Route) => (route.request().method() === "POST" ? void held.push(route) : route.continue());
      await page.route(pattern, handler);
      return {
        held,
        release: async () => {
          for (const route of held) await route.continue();
          await page.unroute(pattern, handler);
        },
      };
    }

    it("opens one listener per counter for all its components, shows the server's numbers, and none before mount", async () => {
      expect(await harness<string>("react")).toMatch(new RegExp(`^${major}\\.`));
      const none = { counters: 0, watchers: 0 };
      expect(await listening()).toEqual({ watch: none, watchMember: none });

      await harness("mount", { likes, views, missing, players });
      // Signed out: the count is the counter's total and liked is false.
      expect(await showing(LIKES, 'success|{"liked":false,"count":2}|')).toEqual(all(LIKES, 'success|{"liked":false,"count":2}|'));
      expect(await showing(VIEWERS, `success|{"value":${VIEWS}}|`)).toEqual(all(VIEWERS, `success|{"value":${VIEWS}}|`));
      expect(await showing(["missing"], "error||CounterNotFoundError")).toEqual({ missing: "error||CounterNotFoundError" });
      expect(await shown("bad-id")).toBe("error||TypeError");
      // Strict mode subscribed each twice and unsubscribed once: one listener per counter (likes, views,
      // missing), shared by the 7 watches of the 8 components (the bad id opened nothing).
      expect(await listening()).toEqual({ watch: { counters: 3, watchers: 7 }, watchMember: none });
    });

    it("useRank shows each player's rank as the server's totals say, shares a counter's listeners, live as another player overtakes", async () => {
      const RANKS = ["rank-first", "rank-first-again", "rank-outside"];
      const first = await rankShown(players[0]);
      expect(await showing(RANKS, first)).toEqual(all(RANKS, first));
      const second = await rankShown(players[1]);
      expect(await showing(["rank-second"], second)).toEqual({ "rank-second": second });
      expect(await showing(["rank-off-board"], "error||NotOnBoardError")).toEqual({ "rank-off-board": "error||NotOnBoardError" });
      // One pair of listeners per counter: the first player's (three components), the second's, the views'.
      expect(await harness("listeningRanks")).toEqual({ counters: 3, watchers: 5 });
      // The second player overtakes the first: both ranks move, through the rollups and the board's summary.
      await admin.call("incrementCounter", { counterId: players[1], delta: 10, requestId: randomUUID() });
      expect((await waitFor(() => serverTotal(players[1]), 13, 30_000)).value).toBe(13);
      const overtaken = await rankShown(players[0]);
      expect(await showing(RANKS, overtaken)).toEqual(all(RANKS, await rankShown(players[0])));
      expect(await showing(["rank-second"], await rankShown(players[1]))).toEqual({ "rank-second": await rankShown(players[1]) });
    });

    it("signed out, a like rejects with the client's SignInRequiredError and sends nothing", async () => {
      const { held, release } = await holdCalls("setMember");
      const [outcome] = await harness<{ ok: boolean; name?: string; code?: string; message?: string }[]>("call", [["like-a", "like"]]);
      expect(outcome).toEqual({
        ok: false,
        name: "SignInRequiredError",
        code: "unauthenticated",
        message: `useLike(${likes}).like(): sign in first: a like is the signed-in user's, and no user is signed in to the client's Firebase app`,
      });
      expect(held).toEqual([]);
      await release();
    });

    it("follows the user who signs in: watchMember for that user, one listener for the three likes", async () => {
      await harness("signUp", email);
      expect(await showing(LIKES, 'success|{"liked":false,"count":2}|')).toEqual(all(LIKES, 'success|{"liked":false,"count":2}|'));
      await page.waitForFunction(() => (globalThis as unknown as { __harness: { listening(): { watchMember: { watchers: number } } } }).__harness.listening().watchMember.watchers === 3);
      expect(await listening()).toEqual({ watch: { counters: 2, watchers: 4 }, watchMember: { counters: 1, watchers: 3 } });
    });

    it("a like shows at once in every component of the counter, and settles at the server's total", async () => {
      const { held, release } = await holdCalls("setMember");
      const settled = harness<{ ok: boolean }[]>("call", [["like-outside", "like"]]);
      const liked = 'success|{"liked":true,"count":3}|';
      expect(await showing(LIKES, liked)).toEqual(all(LIKES, liked));
      await waitFor(() => Promise.resolve(held.length), 1, 30_000);
      expect(await serverTotal(likes)).toBe(2);
      await release();
      expect(await settled).toEqual([{ ok: true, changed: true }]);
      expect((await waitFor(() => serverTotal(likes), 3, 30_000)).value).toBe(3);
      expect(await showing(LIKES, liked)).toEqual(all(LIKES, liked));
    });

    it("a double tap of increment shows +2 at once in the total and today, and settles at the server's total", async () => {
      const { held, release } = await holdCalls("incrementCounter");
      const settled = harness<{ ok: boolean }[]>("call", [["views", "increment"], ["views-today", "increment"]]);
      const more = `success|{"value":${VIEWS + 2}}|`;
      expect(await showing(VIEWERS, more)).toEqual(all(VIEWERS, more));
      await waitFor(() => Promise.resolve(held.length), 2, 30_000);
      expect(await serverTotal(views)).toBe(VIEWS);
      await release();
      expect((await settled).map((outcome) => outcome.ok)).toEqual([true, true]);
      expect((await waitFor(() => serverTotal(views), VIEWS + 2, 30_000)).value).toBe(VIEWS + 2);
      expect(await showing(VIEWERS, more)).toEqual(all(VIEWERS, more));
    });

    it("a double toggle unlikes and likes again, in tap order: the last tap decides, the count ends exact", async () => {
      const outcomes = await harness<{ ok: boolean; changed?: boolean }[]>("call", [["like-b", "toggle"], ["like-b", "toggle"]]);
      expect(outcomes).toEqual([
        { ok: true, changed: true },
        { ok: true, changed: true },
      ]);
      const liked = 'success|{"liked":true,"count":3}|';
      expect(await showing(LIKES, liked)).toEqual(all(LIKES, liked));
      expect((await waitFor(() => serverTotal(likes), 3, 30_000)).value).toBe(3);
      expect((await db.collection(`counters/${likes}/members`).count().get()).data().count).toBe(3);
    });

    it("follows sign-out (liked false, the total) and sign-in again (the user's like back)", async () => {
      await harness("signOut");
      const signedOut = 'success|{"liked":false,"count":3}|';
      expect(await showing(LIKES, signedOut)).toEqual(all(LIKES, signedOut));
      expect(await listening()).toEqual({ watch: { counters: 3, watchers: 7 }, watchMember: { counters: 0, watchers: 0 } });
      await harness("signIn", email);
      const liked = 'success|{"liked":true,"count":3}|';
      expect(await showing(LIKES, liked)).toEqual(all(LIKES, liked));
      expect(await listening()).toEqual({ watch: { counters: 2, watchers: 4 }, watchMember: { counters: 1, watchers: 3 } });
    });

    it("unmounting closes every listener", async () => {
      await harness("unmount");
      const none = { counters: 0, watchers: 0 };
      expect(await listening()).toEqual({ watch: none, watchMember: none });
      expect(await harness("listeningRanks")).toEqual(none);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(await listening()).toEqual({ watch: none, watchMember: none });
      expect(errors).toEqual([]);
    });
  });
});
