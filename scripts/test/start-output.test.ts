// What `npm start` filters out of firebase's output and prints once the suite is ready (the emulator
// lines below are copied from a real `emulators:start` run). The lines it gives for an app, run as printed
// against the emulators: start-output.emulator.test.ts.
import { appLines, isDebugLogLine, isReadyLine, nextSteps } from "../lib/start-output";

const hosts = { auth: "127.0.0.1:9099", firestore: "127.0.0.1:8080", functions: "127.0.0.1:5001" };

describe("npm start's output", () => {
  it("hides the functions' DEBUG logs and the INFO line of each rollup commit (a line per rollup and per call), and nothing else", () => {
    expect(isDebugLogLine('>  {"counterId":"c1","outcome":"committed-lead","reads":1,"severity":"DEBUG","message":"rollup ops"}')).toBe(true);
    expect(isDebugLogLine('\u001b[90m>\u001b[39m  {"verifications":{"auth":"VALID"},"severity":"DEBUG","message":"Callable request verification passed"}')).toBe(true);
    expect(isDebugLogLine('>  {"counterId":"c1","total":3,"lagMs":20,"severity":"INFO","message":"rollup committed"}')).toBe(true);
    expect(isDebugLogLine('>  {"counterId":"c1","severity":"INFO","message":"something else"}')).toBe(false);
    expect(isDebugLogLine('>  {"counterId":"c1","severity":"WARNING","message":"mirror target missing"}')).toBe(false);
    expect(isDebugLogLine('>  {"severity":"ERROR","message":"rollup failed"}')).toBe(false);
    expect(isDebugLogLine(">  plain console output from a function")).toBe(false);
    expect(isDebugLogLine("i  functions: Loaded environment variables from .env.")).toBe(false);
  });

  it("knows when the emulators are ready, colours or not", () => {
    expect(isReadyLine("\u001b[90m│\u001b[39m ✔  All emulators ready! It is now safe to connect your app. \u001b[90m│\u001b[39m")).toBe(true);
    expect(isReadyLine("i  emulators: Starting emulators: auth, functions, firestore")).toBe(false);
  });

  it("then prints the example's URL, seed, make-admin, the lines for an app (one statement each), and how to see debug logs", () => {
    const text = nextSteps({
      project: "demo-counter",
      region: "us-central1",
      hosts,
      example: { url: "http://127.0.0.1:5050/" },
      reactExample: { url: "http://127.0.0.1:5051/" },
      counterId: "demo-post-likes",
      debug: false,
    });
    expect(text).toContain("Open http://127.0.0.1:5050/ and tap like");
    expect(text).toContain("Open http://127.0.0.1:5051/ for the React feed");
    expect(text).toContain("npm run seed");
    expect(text).toContain("npm run make-admin -- you@example.com");
    expect(text).toContain('with functions = getFunctions(app, "us-central1"), firestore = getFirestore(app) and the signed-in user\'s uid:');
    const lines = appLines("demo-post-likes");
    expect(text).toContain(lines.map((line) => `    ${line}`).join("\n"));
    // One statement per line: each ends its statement (a trailing comment aside), none holds two.
    for (const line of lines) expect(line.replace(/\s*\/\/.*$/, "")).toMatch(/^[^;]*(\{[^}]*\}[^;]*)?;$/);
    expect(text).toContain("http://127.0.0.1:5001/demo-counter/us-central1/<name>");
    expect(text).toContain("npm start -- --debug shows them");
  });

  it("says why an example is not served when its port is taken", () => {
    const text = nextSteps({
      project: "demo-counter",
      region: "us-central1",
      hosts,
      example: { error: "EADDRINUSE 127.0.0.1:5050" },
      reactExample: { error: "EADDRINUSE 127.0.0.1:5051" },
      counterId: "demo-post-likes",
      debug: true,
    });
    expect(text).toContain("The example is not served: EADDRINUSE 127.0.0.1:5050");
    expect(text).toContain("The React example is not served: EADDRINUSE 127.0.0.1:5051");
    expect(text).not.toContain("--debug shows them");
  });
});
