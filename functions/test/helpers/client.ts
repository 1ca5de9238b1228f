// The Firebase JS SDK, as an app would use it, pointed at the emulator suite: a signed-in user (Auth
// emulator), callables (functions emulator) and reads of the parent document (Firestore emulator).
import { deleteApp, initializeApp, type FirebaseApp } from "firebase/app";
import { connectAuthEmulator, createUserWithEmailAndPassword, getAuth, signInAnonymously, type User } from "firebase/auth";
import { connectFirestoreEmulator, doc, getDoc, getFirestore, type Firestore } from "firebase/firestore";
import { connectFunctionsEmulator, FunctionsError, getFunctions, httpsCallable, type Functions } from "firebase/functions";
import { randomUUID } from "node:crypto";
import { authHost, firestoreHost, requireEmulators, requireFunctionsEmulator } from "./emulators";

// The pool lives with the scripts (the benchmark uses it outside the tests); the tests take it from here.
export { withConcurrency } from "../../../scripts/lib/concurrency";

export const E2E_PROJECT = process.env.GCLOUD_PROJECT?.startsWith("demo-") ? process.env.GCLOUD_PROJECT : "demo-counter";

export interface Client {
  app: FirebaseApp;
  user: User;
  functions: Functions;
  firestore: Firestore;
  call<R>(name: string, data: unknown): Promise<R>;
  readCounter(counterId: string): Promise<Record<string, unknown> | undefined>;
  close(): Promise<void>;
}

function split(host: string): [string, number] {
  const i = host.lastIndexOf(":");
  return [host.slice(0, i), Number(host.slice(i + 1))];
}

/**
 * A signed-in client: an email/password user, or with `anonymous` an anonymous one (sign_in_provider
 * "anonymous"). `claims` are set through the Auth emulator's admin API before signing in.
 */
export async function signedInClient(claims?: Record<string, unknown>, { anonymous = false } = {}): Promise<Client> {
  await requireEmulators();
  const functionsAt = await requireFunctionsEmulator();
  const app = initializeApp({ projectId: E2E_PROJECT, apiKey: "demo-api-key", appId: "demo-app" }, randomUUID());
  const auth = getAuth(app);
  connectAuthEmulator(auth, `http://${authHost()}`, { disableWarnings: true });
  const functions = getFunctions(app, "us-central1");
  connectFunctionsEmulator(functions, ...split(functionsAt));
  const firestore = getFirestore(app);
  connectFirestoreEmulator(firestore, ...split(firestoreHost()));

  const email = `user-${randomUUID().slice(0, 8)}@example.com`;
  const credential = anonymous ? await signInAnonymously(auth) : await createUserWithEmailAndPassword(auth, email, "password-123");
  if (claims !== undefined) {
    await setClaims(credential.user.uid, claims);
    await credential.user.getIdToken(true);
  }
  return {
    app,
    user: credential.user,
    functions,
    firestore,
    async call<R>(name: string, data: unknown) {
      const result = await httpsCallable<unknown, R>(functions, name)(data);
      return result.data;
    },
    async readCounter(counterId: string) {
      const snap = await getDoc(doc(firestore, "counters", counterId));
      return snap.exists() ? snap.data() : undefined;
    },
    close: () => deleteApp(app),
  };
}

/** Sets custom claims with the Auth emulator's REST API (what the admin SDK's setCustomUserClaims does). */
async function setClaims(uid: string, claims: Record<string, unknown>): Promise<void> {
  const response = await fetch(
    `http://${authHost()}/identitytoolkit.googleapis.com/v1/projects/${E2E_PROJECT}/accounts:update`,
    {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer owner" },
      body: JSON.stringify({ localId: uid, customAttributes: JSON.stringify(claims) }),
    },
  );
  if (!response.ok) throw new Error(`setting custom claims failed: ${response.status} ${await response.text()}`);
}

/**
 * A call that got no HTTP answer at all: the JS SDK's `internal` with status 0 ("internal [0]"), where a
 * refusal by the server has its own status ("internal error [500]"). The functions emulator resets
 * requests that are in flight when it reloads the functions (its worker pool kills the workers it
 * refreshes), as a network can: tests that change a param mid-run see it around the reload.
 */
export function isTransportFailure(error: unknown): boolean {
  return error instanceof FunctionsError && error.code === "functions/internal" && /\[0\]$/.test(error.message);
}

/**
 * Sends a call again while it fails in transport (isTransportFailure), as an app does. Only for calls
 * that are safe to repeat: an increment with a requestId (idempotent), or a probe whose effect is not
 * counted. Any other outcome is returned or thrown as it is.
 */
export async function untilAnswered<T>(call: () => Promise<T>, attempts = 10): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!isTransportFailure(error) || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}

/** The code ("functions/not-found", …) a call was rejected with; fails the test if it resolved. */
export async function functionsErrorCode(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FunctionsError);
  return (error as FunctionsError).code;
}
