// What the client's emulator tests share: a wait and a poll, and the three signed-in users (an admin who
// creates counters, the user whose client is under test, another user whose increments land meanwhile),
// signed in before the file's tests and signed out after them.
import { signedInClient, type Client } from "./client";

export const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits (polling every 20 ms) until `done()`; jest's timeout bounds the wait. */
export async function until(done: () => boolean): Promise<void> {
  while (!done()) await pause(20);
}

/** The three users of a test file; their fields are set once the file's beforeAll has run. */
export function threeUsers(): { admin: Client; user: Client; other: Client } {
  const users = {} as { admin: Client; user: Client; other: Client };
  beforeAll(async () => {
    [users.admin, users.user, users.other] = await Promise.all([signedInClient({ admin: true }), signedInClient(), signedInClient()]);
  });
  afterAll(async () => {
    await Promise.all([users.admin?.close(), users.user?.close(), users.other?.close()]);
  });
  return users;
}
