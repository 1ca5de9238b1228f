// firestore.rules, loaded from the repository, against the Firestore emulator: every guarantee of the
// table that `npm run check-rules` runs on any rules file (cli/src/lib/rules-guarantees.ts), probe by
// probe, as a signed-out client, a signed-in client and one with the admin claim. The expectations live
// in that table only, so these tests and check-rules can never disagree about what the rules must do.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { doc, getDoc } from "firebase/firestore";
import { openRulesProbes, type RulesProbeEnvironment } from "../../cli/src/lib/rules-check";
import { CALLERS, GUARANTEES, type Probe } from "../../cli/src/lib/rules-guarantees";
import { firestoreHost, requireEmulators } from "../../test/helpers/emulators";

const RULES = readFileSync(join(__dirname, "..", "..", "firestore.rules"), "utf8");

let probes: RulesProbeEnvironment;

beforeAll(async () => {
  await requireEmulators();
  probes = await openRulesProbes(RULES, firestoreHost());
});

afterAll(async () => {
  await probes?.close();
});

function name(probe: Probe): string {
  const state = probe.operation === "get" || probe.operation === "update" || probe.operation === "delete" ? (probe.seed ? " (present)" : " (absent)") : "";
  const what = probe.operation === "group" ? `a collection-group query on ${probe.target}` : `${probe.operation} ${probe.target}${state}`;
  return `${CALLERS[probe.caller].label}: ${what}`;
}

describe.each(GUARANTEES.map((g) => [g.statement, g] as const))("%s", (_statement, guarantee) => {
  const cases = guarantee.probes.map((p) => [name(p), p] as const);
  it.each(cases)(`${guarantee.allowed ? "allows" : "denies"} %s`, async (_name, probe) => {
    await expect(probes.allowed(probe)).resolves.toBe(guarantee.allowed);
  });
});

describe("what the allowed reads return", () => {
  it("a counter's get returns its total to a signed-out client", async () => {
    const probe = GUARANTEES.flatMap((g) => g.probes).find((p) => p.caller === "signed-out" && p.operation === "get" && p.seed?.total !== undefined)!;
    const snap = await getDoc(doc(probes.firestore("signed-out"), probe.target));
    expect(snap.get("total")).toBe(7);
  });

  it.each(["members", "memberships"])("a signed-in user's own %s document reads as it is: present with its fields, or absent", async (name) => {
    const own = GUARANTEES.flatMap((g) => g.probes).filter((p) => p.caller === "signed-in" && p.operation === "get" && p.target.endsWith(`/${name}/alice`));
    const snaps = await Promise.all(own.map((p) => getDoc(doc(probes.firestore("signed-in"), p.target))));
    expect(snaps.map((s) => s.exists())).toEqual(own.map((p) => p.seed !== undefined));
    expect(snaps.map((s) => s.exists())).toEqual(expect.arrayContaining([true, false]));
    expect(snaps.map((s) => s.data())).toEqual(own.map((p) => p.seed));
  });
});

describe("this repository's own project", () => {
  it("denies every other document (no rule matches it)", async () => {
    await expect(probes.allowed({ caller: "signed-in", operation: "get", target: "profiles/alice" })).resolves.toBe(false);
    await expect(probes.allowed({ caller: "admin", operation: "create", target: "profiles/root", data: { name: "Root" } })).resolves.toBe(false);
  });
});
