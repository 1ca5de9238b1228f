// What init writes into the codebase folder, from its pure pieces (init/codebase.ts): how a package spec
// is written (a version as it is, a tarball as a file: path), and how an existing package.json and .env
// of the codebase are kept while what is new is added. No emulator, no files.
import { join } from "node:path";
import { codebaseEnv, codebasePackageJson, envNames, packageSpec } from "../src/init/codebase";
import type { ParamInfo } from "../../functions/src/model/params";

const PROJECT = "/home/me/app";
const CODEBASE = join(PROJECT, "counters");

describe("packageSpec", () => {
  it.each([
    ["0.2.0", "0.2.0"],
    ["^0.2.0", "^0.2.0"],
    ["latest", "latest"],
  ])("keeps a version, a range or a tag (%s) as it is", (spec, written) => {
    expect(packageSpec(spec, CODEBASE, PROJECT, PROJECT)).toBe(written);
  });

  it("writes a tarball inside the project relative to the codebase folder, and one outside it by its absolute path", () => {
    expect(packageSpec("vendor/functions.tgz", CODEBASE, PROJECT, PROJECT)).toBe("file:../vendor/functions.tgz");
    expect(packageSpec("../packs/functions.tgz", CODEBASE, PROJECT, PROJECT)).toBe("file:/home/me/packs/functions.tgz");
    expect(packageSpec("file:/tmp/cli.tgz", CODEBASE, PROJECT, PROJECT)).toBe("file:/tmp/cli.tgz");
  });
});

describe("codebasePackageJson", () => {
  const specs = { functions: "0.2.0", cli: "0.2.0" };

  it("keeps an existing package.json's own fields, scripts and dependency ranges, and sets ours", () => {
    const existing = `${JSON.stringify({ name: "mine", scripts: { preflight: "custom", lint: "eslint ." }, dependencies: { "firebase-admin": "^14.9.0", lodash: "^4" } }, null, 2)}\n`;
    const written = JSON.parse(codebasePackageJson(existing, "counters", { functions: "0.3.0", cli: "0.3.0" })) as Record<string, unknown>;
    expect(written).toEqual({
      name: "mine",
      scripts: { preflight: "custom", lint: "eslint ." },
      dependencies: { "@firestore-exact-counter/functions": "0.3.0", "firebase-admin": "^14.9.0", "firebase-functions": "^7.4.0", lodash: "^4" },
      devDependencies: { "@firestore-exact-counter/cli": "0.3.0" },
    });
  });

  it("returns the same bytes when nothing changes, whatever their formatting", () => {
    const first = codebasePackageJson(undefined, "counters", specs);
    const reformatted = JSON.stringify(JSON.parse(first));
    expect(codebasePackageJson(reformatted, "counters", specs)).toBe(reformatted);
  });
});

describe("codebaseEnv", () => {
  const params: ParamInfo[] = [
    { name: "ALPHA", type: "int", default: "1", description: "The first. It has two sentences." },
    { name: "BETA", type: "string", default: "", description: "The second." },
  ];

  it("writes every param with its default, each under its description", () => {
    const env = codebaseEnv(undefined, "counters", params);
    expect(env).toContain("\n# The first.\n# It has two sentences.\nALPHA=1\n\n# The second.\nBETA=\n");
    expect([...envNames(env)]).toEqual(["ALPHA", "BETA"]);
  });

  it("keeps every line of an existing .env and appends only the params it lacks", () => {
    const existing = "# mine\nALPHA=7";
    expect(codebaseEnv(existing, "counters", params)).toBe("# mine\nALPHA=7\n\n# Added by firestore-exact-counter init 0.2.0:\n# The second.\nBETA=\n");
    expect(codebaseEnv("ALPHA=7\nBETA=x\n", "counters", params)).toBe("ALPHA=7\nBETA=x\n");
  });
});
