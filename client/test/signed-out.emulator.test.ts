// watchMember without the user signed in, with the real Firebase JS SDK against the emulators: the rules
// let only the signed-in user read their own like (members/{uid}, memberships/{uid}), so Firestore
// refuses the listeners with "Missing or insufficient permissions". The watch tells the client's own
// SignInRequiredError instead, once (though two listeners are refused), naming the call and saying to sign
// in: signed out (the uid of a user who signed out), and signed in as another user. The counter's total
// (watch) needs no user. And the client's listener count (its registry's own) goes back to 0 when the
// refused watch stops.
import { getAuth, signOut } from "firebase/auth";
import { createCounterClient, SignInRequiredError, type CounterClient } from "../src";
import { internalsOf } from "../src/internals";
import { signedInClient, type Client } from "../../test/helpers/client";
import { pause, until } from "../../test/helpers/client-users";

jest.setTimeout(120_000);

let admin: Client;
let signedOut: Client;
let other: Client;
const counterId = `signed-out-${Date.now()}`;

beforeAll(async () => {
  [admin, signedOut, other] = await Promise.all([signedInClient({ admin: true }), signedInClient(), signedInClient()]);
  await admin.call("createCounter", { counterId, unique: true });
  await admin.call("setMember", { counterId, member: true });
  await signOut(getAuth(signedOut.app));
});

afterAll(async () => {
  await Promise.all([admin?.close(), signedOut?.close(), other?.close()]);
});

/** Watches `counterId` for `uid` with `client` for 1.5 s after its first error: what it showed and was told. */
async function watchFor(client: CounterClient, uid: string): Promise<{ values: (number | null)[]; errors: Error[] }> {
  const values: (number | null)[] = [];
  const errors: Error[] = [];
  const stop = client.watchMember(counterId, uid, (value) => values.push(value), (error) => errors.push(error));
  expect(internalsOf(client)?.listening().watchMember).toEqual({ counters: 1, watchers: 1 });
  await until(() => errors.length > 0);
  await pause(1500);
  stop();
  expect(internalsOf(client)?.listening().watchMember).toEqual({ counters: 0, watchers: 0 });
  return { values, errors };
}

describe("watchMember of a user who is not signed in", () => {
  it("tells onError once with a SignInRequiredError saying to sign in, not the rules' message, and shows nothing", async () => {
    const uid = signedOut.user.uid;
    expect(getAuth(signedOut.app).currentUser).toBeNull();
    const client = createCounterClient({ functions: signedOut.functions, firestore: signedOut.firestore });
    const { values, errors } = await watchFor(client, uid);
    expect(values).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SignInRequiredError);
    expect(errors[0]).toMatchObject({ name: "SignInRequiredError", code: "unauthenticated", counterId });
    expect(errors[0]!.message).toBe(
      `watchMember(${counterId}, ${uid}): sign in first: Firestore lets only the user ${uid}, signed in to the client's Firebase app, ` +
        "read their like, and refused it (permission-denied): no user is signed in, or another one is",
    );
    expect(errors[0]!.message).not.toContain("insufficient permissions");
    expect((errors[0]!.cause as { code?: string }).code).toBe("permission-denied");
  });

  it("tells the same for a user signed in as someone else", async () => {
    const client = createCounterClient({ functions: other.functions, firestore: other.firestore });
    const { values, errors } = await watchFor(client, admin.user.uid);
    expect(values).toEqual([]);
    expect(errors.map((error) => [error.name, error.message.startsWith(`watchMember(${counterId}, ${admin.user.uid}): sign in first:`)])).toEqual([
      ["SignInRequiredError", true],
    ]);
  });

  it("while the counter's total needs no user: watch shows it signed out", async () => {
    const client = createCounterClient({ functions: signedOut.functions, firestore: signedOut.firestore });
    const values: (number | null)[] = [];
    const errors: Error[] = [];
    const stop = client.watch(counterId, (value) => values.push(value), (error) => errors.push(error));
    await until(() => values.length > 0);
    stop();
    expect({ values, errors }).toEqual({ values: [1], errors: [] });
  });
});
