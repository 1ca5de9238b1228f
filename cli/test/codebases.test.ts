// Which way the preflight and init read a codebase's manifest (lib/codebases.ts): from a file the
// functions SDK writes and exits, where its version can (6.4.0 and later), else from its HTTP server as
// a deploy does by default. The discoveries themselves run in preflight.emulator.test.ts.
import { writesManifestFile } from "../src/lib/codebases";

describe("writesManifestFile", () => {
  it.each([
    ["7.4.0", true],
    ["6.4.0", true],
    ["6.10.1", true],
    ["10.0.0", true],
    ["6.3.2", false],
    ["5.1.1", false],
    ["", false],
    [undefined, false],
    ["latest", false],
  ])("firebase-functions %p: %p", (version, expected) => {
    expect(writesManifestFile(version)).toBe(expected);
  });
});
