// The functions and CLI tarballs as the registry would get them: `npm publish --dry-run` of each packed
// tarball passes without a warning about the package, and each ships what users need (built code with its
// types, params.env, the files the CLI merges into an app, a README) and nothing of the repository's
// (tests, the repository's own .env). The client's own check: client/test/packed.app.test.ts.
import { packedTarballs, npm } from "../../test/helpers/packed";
import { tmpdir } from "node:os";
import type { Run } from "../../test/helpers/run";

jest.setTimeout(300_000);

interface Report {
  name: string;
  version: string;
  files: { path: string }[];
}

/** `npm publish <tarball> --dry-run` (offline: a dry run needs nothing from the registry). */
async function dryRun(tarball: string): Promise<{ run: Run; report: Report }> {
  const run = await npm(["publish", tarball, "--dry-run", "--offline", "--json"], tmpdir());
  const reports = JSON.parse(run.stdout) as Record<string, Report>;
  return { run, report: Object.values(reports)[0]! };
}

/** npm's warnings about the package (not about this machine: an unknown user setting, no login for a dry run). */
function packageWarnings(run: Run): string[] {
  return run.stderr
    .split("\n")
    .filter((line) => line.startsWith("npm warn") || line.startsWith("npm error"))
    .filter((line) => !/Unknown (user|env|global) config|requires you to be logged in/.test(line));
}

describe("npm publish --dry-run of the packed tarballs", () => {
  it("@firestore-exact-counter/functions: built code with types, params.env and a README; no tests", async () => {
    const { run, report } = await dryRun((await packedTarballs()).functions);
    expect({ code: run.code, warnings: packageWarnings(run) }).toEqual({ code: 0, warnings: [] });
    expect({ name: report.name, version: report.version }).toEqual({ name: "@firestore-exact-counter/functions", version: "0.2.0" });
    const files = report.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(["README.md", "package.json", "params.env", "lib/index.js", "lib/index.d.ts", "lib/entry/createCounter.d.ts"]));
    expect(files.filter((f) => f.startsWith("test/") || f === ".env" || f.startsWith("node_modules/"))).toEqual([]);
  });

  it("@firestore-exact-counter/cli: the bin, the bundle, the rules and indexes it merges, and a README", async () => {
    const { run, report } = await dryRun((await packedTarballs()).cli);
    expect({ code: run.code, warnings: packageWarnings(run) }).toEqual({ code: 0, warnings: [] });
    expect({ name: report.name, version: report.version }).toEqual({ name: "@firestore-exact-counter/cli", version: "0.2.0" });
    expect(report.files.map((f) => f.path).sort()).toEqual(["README.md", "bin/firestore-exact-counter.js", "lib/firestore.indexes.json", "lib/firestore.rules", "lib/main.js", "package.json"]);
  });
});
