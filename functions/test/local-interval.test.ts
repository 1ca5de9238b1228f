// The line the emulator prints as it loads the functions (config/local-interval.ts): the rollup interval
// and the file that gave it, only in the emulator's discovery of the functions.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { localIntervalLine } from "../src/config/local-interval";

const DISCOVERY = { FUNCTIONS_EMULATOR: "true", FUNCTIONS_CONTROL_API: "true", GCLOUD_PROJECT: "demo-x" };

describe("localIntervalLine", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "local-interval-"));
    writeFileSync(join(dir, ".env"), "ROLLUP_INTERVAL_MS=1000\n");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("names init's .env.local's 100 ms, which only the emulator reads", () => {
    writeFileSync(join(dir, ".env.local"), "# why\nROLLUP_INTERVAL_MS=100\n");
    expect(localIntervalLine(DISCOVERY, dir)).toBe(
      "firestore-exact-counter: the emulator runs rollups every 100 ms (ROLLUP_INTERVAL_MS in .env.local), which only the emulator reads: a local burst of writes settles within seconds",
    );
  });

  it("names .env's interval, and what keeps a local loop quick, where no .env.local sets one", () => {
    writeFileSync(join(dir, `.env.demo-x`), "REGION=europe-west1\n");
    expect(localIntervalLine(DISCOVERY, dir)).toMatch(
      /^firestore-exact-counter: the emulator runs rollups every 1000 ms \(ROLLUP_INTERVAL_MS in \.env\): .* a shorter ROLLUP_INTERVAL_MS in \.env\.local, which only the emulator reads, keeps up/,
    );
  });

  it("says nothing outside the emulator's discovery: a deploy's discovery, a function's worker", () => {
    expect(localIntervalLine({ FUNCTIONS_CONTROL_API: "true" }, dir)).toBeUndefined();
    expect(localIntervalLine({ FUNCTIONS_EMULATOR: "true", ROLLUP_INTERVAL_MS: "100" }, dir)).toBeUndefined();
  });
});
