// Runs the guarantee table (rules-guarantees.ts) against a rules file in a Firestore emulator: loads the
// rules into a project of their own, seeds the documents the probes need with rules disabled, makes every
// probe as a real client (the Firebase JS SDK through @firebase/rules-unit-testing) and reports, per
// guarantee, which callers broke it. Shared by the rules test tier, check-rules and init.
import { randomUUID } from "node:crypto";
// The JS SDK and rules-unit-testing load when a check runs, not with the module: init, check-rules and the
// preflight answer --help and argument mistakes without them (they take a second and more to load).
import type { RulesTestEnvironment } from "@firebase/rules-unit-testing";
import type * as FirestoreSdkModule from "firebase/firestore";
import type { Firestore } from "firebase/firestore";
import { ALL_CALLERS, CALLERS, GUARANTEES, breachLine, type Caller, type Guarantee, type Probe } from "./rules-guarantees";

type FirestoreSdk = typeof FirestoreSdkModule;

export interface GuaranteeResult {
  guarantee: Guarantee;
  /** The callers whose probes broke it (empty when it holds). */
  breakers: Caller[];
  /** One line per such caller, e.g. "signed-in users can write counters/{id}/shards/{n}". */
  breaches: string[];
}

export interface RulesProbeEnvironment {
  /** Whether the rules allowed the probe; throws on anything but a permission decision. */
  allowed(probe: Probe): Promise<boolean>;
  /** Sets documents as they are before a probe (data null: absent), with the rules disabled. */
  seed(documents: readonly { path: string; data: Record<string, unknown> | null }[]): Promise<void>;
  /** The client a caller's probes use, for reads that check what an allowed request returns. */
  firestore(caller: Caller): Firestore;
  /** Deletes the project's documents and closes every client. */
  close(): Promise<void>;
}

/**
 * Loads `rules` into a fresh demo project on the emulator at `firestoreHost` (host:port) and seeds every
 * probe's document. Throws with the compiler's message when the rules do not compile.
 */
export async function openRulesProbes(rules: string, firestoreHost: string): Promise<RulesProbeEnvironment> {
  const [{ initializeTestEnvironment }, sdk] = await Promise.all([import("@firebase/rules-unit-testing"), import("firebase/firestore")]);
  // A denied request is the answer here, not a problem: keep the SDK from logging each one.
  sdk.setLogLevel("silent");
  const separator = firestoreHost.lastIndexOf(":");
  bypassProxies(firestoreHost.slice(0, separator));
  const env = await initializeTestEnvironment({
    // A project of its own per run: rules and documents never meet another run's or a test's.
    projectId: `demo-rules-check-${randomUUID().slice(0, 8)}`,
    firestore: { rules, host: firestoreHost.slice(0, separator), port: Number(firestoreHost.slice(separator + 1)) },
  }).catch((error: unknown) => {
    throw emulatorError(error);
  });
  const seed = (documents: readonly { path: string; data: Record<string, unknown> | null }[]) =>
    env.withSecurityRulesDisabled(async (context) => {
      const db = context.firestore() as unknown as Firestore;
      await Promise.all(documents.map(({ path, data }) => (data === null ? sdk.deleteDoc(sdk.doc(db, path)) : sdk.setDoc(sdk.doc(db, path), data))));
    });
  try {
    await seed(GUARANTEES.flatMap((g) => g.probes).flatMap((p) => (p.seed === undefined ? [] : [{ path: p.target, data: p.seed }])));
  } catch (error) {
    await env.cleanup();
    throw error;
  }
  const clients = clientsFor(env);
  return {
    allowed: (probe) => allowed(sdk, clients[probe.caller], probe),
    seed,
    firestore: (caller) => clients[caller],
    close: async () => {
      await env.clearFirestore();
      await env.cleanup();
    },
  };
}

/**
 * The emulator runs on this machine: a proxy that the environment names (HTTPS_PROXY, a corporate one, or
 * firebase deploy's own environment when this runs as its predeploy step) must not carry the probes. The
 * JS SDK's gRPC reads no_grpc_proxy, and no_proxy only when that is unset.
 */
function bypassProxies(hostname: string): void {
  const list = (process.env.no_grpc_proxy ?? process.env.no_proxy ?? "").split(",").filter((h) => h.trim() !== "");
  if (!list.includes(hostname)) process.env.no_grpc_proxy = [...list, hostname].join(",");
}

/** The emulator's own message (e.g. "Error compiling rules: L17:16 Unexpected '('.") from its JSON answer. */
function emulatorError(error: unknown): Error {
  const text = error instanceof Error ? error.message : String(error);
  try {
    const message = (JSON.parse(text) as { error?: { message?: string } }).error?.message;
    if (message !== undefined) return new Error(message.replace(/\s*\n\s*/g, " "));
  } catch {
    // not the emulator's JSON: keep the error as it is
  }
  return error instanceof Error ? error : new Error(text);
}

function clientsFor(env: RulesTestEnvironment): Record<Caller, Firestore> {
  const firestore = (caller: Caller) => {
    const { uid, claims } = CALLERS[caller];
    const context = uid === undefined ? env.unauthenticatedContext() : env.authenticatedContext(uid, claims);
    // rules-unit-testing hands out the compat instance; the modular functions accept it.
    return context.firestore() as unknown as Firestore;
  };
  return Object.fromEntries(ALL_CALLERS.map((caller) => [caller, firestore(caller)])) as Record<Caller, Firestore>;
}

async function allowed(sdk: FirestoreSdk, db: Firestore, probe: Probe): Promise<boolean> {
  try {
    await request(sdk, db, probe);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "permission-denied") return false;
    throw new Error(`${probe.operation} ${probe.target} as ${CALLERS[probe.caller].label} failed: ${String(error)}`);
  }
}

async function request(sdk: FirestoreSdk, db: Firestore, probe: Probe): Promise<unknown> {
  const { target } = probe;
  const { collection, collectionGroup, deleteDoc, doc, getDoc, getDocs, setDoc, updateDoc } = sdk;
  switch (probe.operation) {
    case "get":
      return getDoc(doc(db, target));
    case "list":
      return getDocs(collection(db, target));
    case "group":
      return getDocs(collectionGroup(db, target));
    case "create":
      return setDoc(doc(db, target), probe.data ?? {});
    case "update":
      return updateDoc(doc(db, target), probe.data ?? {});
    case "delete":
      return deleteDoc(doc(db, target));
  }
}

/** Every guarantee of the table, checked against `rules`. */
export async function checkGuarantees(rules: string, firestoreHost: string): Promise<GuaranteeResult[]> {
  const probes = await openRulesProbes(rules, firestoreHost);
  try {
    // One at a time (about 100 probes, a few seconds): with many requests in flight on one client, the
    // JS SDK's watch stream can declare itself offline on a busy machine and fail a get that was fine.
    const outcomes = new Map<Probe, boolean>();
    for (const probe of GUARANTEES.flatMap((g) => g.probes)) outcomes.set(probe, await probes.allowed(probe));
    return GUARANTEES.map((guarantee) => {
      const broken = guarantee.probes.filter((p) => outcomes.get(p) !== guarantee.allowed).map((p) => p.caller);
      const breakers = ALL_CALLERS.filter((c) => broken.includes(c));
      return { guarantee, breakers, breaches: breakers.map((c) => breachLine(guarantee, c)) };
    });
  } finally {
    await probes.close();
  }
}
