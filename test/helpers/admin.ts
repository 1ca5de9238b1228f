// An admin SDK view of the project the functions emulator serves, for e2e assertions on documents the
// client may not read (shards, idempotency records).
import { getApps, initializeApp } from "firebase-admin/app";
import { getFirestore, type Firestore } from "firebase-admin/firestore";
import { E2E_PROJECT } from "./client";

export function e2eAdminDb(): Firestore {
  const app = getApps().find((a) => a.name === "e2e-admin") ?? initializeApp({ projectId: E2E_PROJECT }, "e2e-admin");
  return getFirestore(app);
}

/** Polls until `read()` returns `expected` or `timeoutMs` passes; returns the last value and the wait. */
export async function waitFor<T>(read: () => Promise<T>, expected: T, timeoutMs: number): Promise<{ value: T; waitedMs: number }> {
  const started = Date.now();
  let value = await read();
  while (value !== expected && Date.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return { value, waitedMs: Date.now() - started };
}
