// A signed-in user of the Firebase JS SDK, as an app would be, pointed at the emulator suite: an account
// made in the Auth emulator (custom claims set through its admin API), callables (functions emulator) and
// reads of a counter's parent (Firestore emulator). The benchmark calls the product's callables with it;
// the tests' helper (test/helpers/client.ts) finds the emulators its own way and hands them here.
import { deleteApp, initializeApp, type FirebaseApp } from "firebase/app";
import { connectAuthEmulator, createUserWithEmailAndPassword, getAuth, signInAnonymously, type User } from "firebase/auth";
import { connectFirestoreEmulator, getFirestore, type Firestore } from "firebase/firestore";
import * as lite from "firebase/firestore/lite";
import { connectFunctionsEmulator, getFunctions, httpsCallable, type Functions } from "firebase/functions";
import { randomUUID } from "node:crypto";
import { splitHost, type EmulatorHosts } from "./emulator-hosts";

export interface Client {
  app: FirebaseApp;
  user: User;
  functions: Functions;
  firestore: Firestore;
  call<R>(name: string, data: unknown): Promise<R>;
  /** A document as the user reads it (the rules apply), one request: its data, or undefined when it does not exist. */
  readDocument(path: string): Promise<Record<string, unknown> | undefined>;
  readCounter(counterId: string): Promise<Record<string, unknown> | undefined>;
  close(): Promise<void>;
}

export interface SignIn {
  /** The demo project the emulators serve. */
  projectId: string;
  /** Where the emulators listen (host:port each). */
  hosts: EmulatorHosts;
  /** Custom claims, set before the user signs in (its ID token carries them). */
  claims?: Record<string, unknown>;
  /** An anonymous user (sign_in_provider "anonymous") instead of an email/password one. */
  anonymous?: boolean;
}

/** A new user, signed in on an app of its own. */
export async function signIn({ projectId, hosts, claims, anonymous = false }: SignIn): Promise<Client> {
  const app = initializeApp({ projectId, apiKey: "demo-api-key", appId: "demo-app" }, randomUUID());
  const auth = getAuth(app);
  connectAuthEmulator(auth, `http://${hosts.auth}`, { disableWarnings: true });
  const functions = getFunctions(app, "us-central1");
  connectFunctionsEmulator(functions, ...splitHost(hosts.functions));
  const firestore = getFirestore(app);
  connectFirestoreEmulator(firestore, ...splitHost(hosts.firestore));
  // One-shot reads through the Lite SDK: one request each, no Listen stream, which the Firestore emulator
  // breaks now and then (firebase-tools issue 8654) so that the full SDK's getDoc errs or waits for minutes.
  // The full SDK (`firestore`) is for listeners: the client package's.
  const reads = lite.getFirestore(app);
  lite.connectFirestoreEmulator(reads, ...splitHost(hosts.firestore));
  const readDocument = async (path: string) => {
    const snap = await lite.getDoc(lite.doc(reads, path));
    return snap.exists() ? snap.data() : undefined;
  };

  const email = `user-${randomUUID().slice(0, 8)}@example.com`;
  const credential = anonymous ? await signInAnonymously(auth) : await createUserWithEmailAndPassword(auth, email, "password-123");
  if (claims !== undefined) {
    await setClaims(hosts.auth, projectId, credential.user.uid, claims);
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
    readDocument,
    readCounter: (counterId: string) => readDocument(`counters/${counterId}`),
    close: () => deleteApp(app),
  };
}

/** Sets custom claims with the Auth emulator's REST API (what the admin SDK's setCustomUserClaims does). */
async function setClaims(authHost: string, projectId: string, uid: string, claims: Record<string, unknown>): Promise<void> {
  const response = await fetch(`http://${authHost}/identitytoolkit.googleapis.com/v1/projects/${projectId}/accounts:update`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer owner" },
    body: JSON.stringify({ localId: uid, customAttributes: JSON.stringify(claims) }),
  });
  if (!response.ok) throw new Error(`setting custom claims failed: ${response.status} ${await response.text()}`);
}
