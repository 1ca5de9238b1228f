// The Firebase JS SDK, as an app would use it, pointed at the emulator suite: a signed-in user (Auth
// emulator), callables (functions emulator) and reads of the parent document (Firestore emulator). The
// client itself lives with the scripts (scripts/lib/client.ts: the benchmark uses it outside the tests);
// here the tests find the emulators (failing loudly when one does not answer) and hand them to it.
import { FunctionsError } from "firebase/functions";
import { signIn, type Client } from "../../scripts/lib/client";
import { authHost, firestoreHost, requireEmulators, requireFunctionsEmulator } from "./emulators";

// The pool lives with the scripts (the benchmark uses it outside the tests); the tests take it from here.
export { withConcurrency } from "../../scripts/lib/concurrency";
export type { Client };

export const E2E_PROJECT = process.env.GCLOUD_PROJECT?.startsWith("demo-") ? process.env.GCLOUD_PROJECT : "demo-counter";

/**
 * A signed-in client: an email/password user, or with `anonymous` an anonymous one (sign_in_provider
 * "anonymous"). `claims` are set through the Auth emulator's admin API before signing in.
 */
export async function signedInClient(claims?: Record<string, unknown>, { anonymous = false } = {}): Promise<Client> {
  await requireEmulators();
  const functions = await requireFunctionsEmulator();
  return signIn({ projectId: E2E_PROJECT, hosts: { auth: authHost(), firestore: firestoreHost(), functions }, claims, anonymous });
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
