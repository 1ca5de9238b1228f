// What npm test and npm start check before they start (scripts/lib/requirements.ts, scripts/requirements.ts):
// the Java version read from `java -version`, what each purpose needs, and the script itself on a machine
// without Java and Chromium: one line naming both and what installs them, exit 1.
import { checkRequirements, javaMajor, type Machine } from "../lib/requirements";
import { runScript } from "../../test/helpers/run";

const READY: Machine = {
  javaVersion: 'openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)',
  firestoreEmulator: "/work/.cache/firestore-emulator-launcher.jar",
  chromium: { path: "/usr/bin/chromium", exists: true },
};

describe("javaMajor", () => {
  it.each([
    ['openjdk version "17.0.15" 2025-04-15', 17],
    ['openjdk version "21" 2023-09-19', 21],
    ['java version "1.8.0_392"', 8],
    ['openjdk version "11.0.2" 2019-01-15', 11],
    ["no version here", undefined],
  ])("reads %j as %s", (output, major) => {
    expect(javaMajor(output)).toBe(major);
  });
});

describe("checkRequirements", () => {
  it("finds nothing missing on a ready machine, for the tests and for npm start", () => {
    expect(checkRequirements(READY, { chromium: true })).toEqual({ missing: [], notes: [] });
  });

  it("names Java older than 17, or none, with the package that installs it", () => {
    for (const [javaVersion, found] of [
      [undefined, "no java on PATH"],
      ['java version "1.8.0_392"', "java 8"],
    ] as const) {
      expect(checkRequirements({ ...READY, javaVersion }, { chromium: false }).missing).toEqual([
        { what: "Java 17+ (the Firestore emulator)", fix: `${found}: apt-get install -y openjdk-17-jre-headless` },
      ]);
    }
  });

  it("names Chromium for the tests only", () => {
    const machine = { ...READY, chromium: { path: "/usr/bin/chromium", exists: false } };
    expect(checkRequirements(machine, { chromium: false }).missing).toEqual([]);
    expect(checkRequirements(machine, { chromium: true }).missing).toEqual([
      { what: "Chromium (the browser tests)", fix: "no /usr/bin/chromium: apt-get install -y chromium, or set CHROMIUM_PATH" },
    ]);
  });

  it("says, without stopping, that firebase-tools downloads the Firestore emulator where none is installed", () => {
    const check = checkRequirements({ ...READY, firestoreEmulator: undefined }, { chromium: true });
    expect(check.missing).toEqual([]);
    expect(check.notes).toEqual([expect.stringMatching(/^the Firestore emulator is not installed: firebase-tools downloads it now.*apt-get install -y google-cloud-cli-firestore-emulator/) as string]);
  });
});

describe("scripts/requirements.ts", () => {
  it("stops in one line naming Java and Chromium and what installs them, exit 1, where neither is there", async () => {
    const run = await runScript("requirements", ["--chromium"], { env: { ...process.env, PATH: "/nonexistent", CHROMIUM_PATH: "/nonexistent/chromium", npm_lifecycle_event: "test" } });
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "npm test needs Java 17+ (the Firestore emulator) (no java on PATH: apt-get install -y openjdk-17-jre-headless) and Chromium (the browser tests) " +
        "(no /nonexistent/chromium: apt-get install -y chromium, or set CHROMIUM_PATH); see docs/development.md#requirements\n",
    });
  });

  it("passes where both are there (npm start does not need Chromium)", async () => {
    const run = await runScript("requirements", [], { env: { ...process.env, CHROMIUM_PATH: "/nonexistent/chromium", npm_lifecycle_event: "start" } });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
  });
});
