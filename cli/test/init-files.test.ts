// What init writes into the codebase folder, from its pieces (init/codebase.ts, init/tarballs.ts): how a
// package spec is written (a version as it is, a tarball copied into the codebase folder and named
// file:./x.tgz), and how an existing package.json and .env of the codebase are kept while what is new is
// added. No emulator; the tarballs are small files in a temporary folder.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { codebaseEnv, codebasePackageJson, envNames } from "../src/init/codebase";
import { replacedTarballs, resolveSpec } from "../src/init/tarballs";
import type { ParamInfo } from "../../functions/src/model/params";


describe("resolveSpec", () => {
  let project: string;
  let codebase: string;
  const packs = () => join(project, "..", "packs");

  beforeAll(() => {
    project = join(mkdtempSync(join(tmpdir(), "init-specs-")), "app");
    codebase = join(project, "counters");
    mkdirSync(join(codebase), { recursive: true });
    mkdirSync(join(project, "vendor"));
    mkdirSync(packs());
    for (const path of [join(packs(), "firestore-exact-counter-functions-0.2.0.tgz"), join(project, "vendor", "cli.tgz"), join(codebase, "functions.tgz")]) writeFileSync(path, "a tarball");
    writeFileSync(join(packs(), "notes.txt"), "not a tarball");
    mkdirSync(join(packs(), "functions"));
  });

  afterAll(() => rmSync(join(project, ".."), { recursive: true, force: true }));

  it.each(["0.2.0", "^0.2.0", "latest"])("keeps a version, a range or a tag (%s) as it is, copying nothing", (spec) => {
    expect(resolveSpec("--functions-package", spec, codebase, project, project)).toEqual({ spec });
  });

  it("copies a tarball from anywhere into the codebase folder and names it relative to it: file:./<name>", () => {
    const outside = join(packs(), "firestore-exact-counter-functions-0.2.0.tgz");
    for (const given of [outside, "../packs/firestore-exact-counter-functions-0.2.0.tgz", `file:${outside}`]) {
      expect(resolveSpec("--functions-package", given, codebase, project, project)).toEqual({
        spec: "file:./firestore-exact-counter-functions-0.2.0.tgz",
        copy: { source: outside, name: "firestore-exact-counter-functions-0.2.0.tgz" },
      });
    }
    expect(resolveSpec("--cli-package", "vendor/cli.tgz", codebase, project, project)).toEqual({ spec: "file:./cli.tgz", copy: { source: join(project, "vendor", "cli.tgz"), name: "cli.tgz" } });
  });

  it("names a tarball already in the codebase folder where it is, copying nothing", () => {
    expect(resolveSpec("--functions-package", "counters/functions.tgz", codebase, project, project)).toEqual({ spec: "file:./functions.tgz" });
    expect(resolveSpec("--functions-package", "./functions.tgz", codebase, project, codebase)).toEqual({ spec: "file:./functions.tgz" });
  });

  it("names a folder as given, warning that neither a clone elsewhere nor the deploy's build can install it", () => {
    const folder = resolveSpec("--functions-package", join(packs(), "functions"), codebase, project, project);
    expect(folder.spec).toBe(`file:${join(packs(), "functions")}`);
    expect(folder.warning).toMatch(/^--functions-package .* is a folder outside counters\/: .*give init a tarball \(npm pack\) instead$/);
    expect(resolveSpec("--functions-package", "./vendor", codebase, project, project)).toMatchObject({ spec: "file:../vendor", warning: expect.any(String) as string });
  });

  it("refuses a path that does not exist, and a file that is not a tarball, naming the option", () => {
    expect(() => resolveSpec("--cli-package", "../packs/nosuch.tgz", codebase, project, project)).toThrow("--cli-package ../packs/nosuch.tgz: no such file or folder");
    expect(() => resolveSpec("--cli-package", join(packs(), "notes.txt"), codebase, project, project)).toThrow("not a tarball");
  });
});

describe("replacedTarballs", () => {
  it("names the codebase's tarballs package.json named for our packages and names no more, if they are there", () => {
    const codebase = mkdtempSync(join(tmpdir(), "init-replaced-"));
    try {
      for (const name of ["f-0.1.0.tgz", "c-0.1.0.tgz", "f-0.2.0.tgz"]) writeFileSync(join(codebase, name), "x");
      const existing = JSON.stringify({ dependencies: { "@x/functions": "file:./f-0.1.0.tgz", lodash: "file:./lodash.tgz" }, devDependencies: { "@x/cli": "file:./c-0.1.0.tgz" } });
      expect(replacedTarballs(existing, ["@x/functions", "@x/cli"], ["file:./f-0.2.0.tgz", "file:./c-0.1.0.tgz"], codebase)).toEqual(["f-0.1.0.tgz"]);
      expect(replacedTarballs(existing, ["@x/functions", "@x/cli"], ["0.2.0", "0.2.0"], codebase)).toEqual(["f-0.1.0.tgz", "c-0.1.0.tgz"]);
      expect(replacedTarballs(undefined, ["@x/functions"], ["0.2.0"], codebase)).toEqual([]);
      expect(replacedTarballs(JSON.stringify({ dependencies: { "@x/functions": "file:/elsewhere/f.tgz" } }), ["@x/functions"], ["0.2.0"], codebase)).toEqual([]);
    } finally {
      rmSync(codebase, { recursive: true, force: true });
    }
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
