// The lines `npm start` gives for an app (scripts/lib/start-output.ts), run as printed against the emulators
// with the real client. What it filters and prints: start-output.test.ts.
import { randomUUID } from "node:crypto";
import { runInNewContext } from "node:vm";
import { createCounterClient } from "../../client/src";
import { waitFor } from "../../test/helpers/admin";
import { signedInClient, type Client } from "../../test/helpers/client";
import { appLines } from "../lib/start-output";

// The test waits up to 30 s for the printed like and 30 s more for the committed total.
jest.setTimeout(90_000);

describe("the lines for an app", () => {
  let admin: Client;
  let user: Client;
  beforeAll(async () => {
    admin = await signedInClient({ admin: true });
    user = await signedInClient();
  });
  afterAll(async () => {
    await admin?.close();
    await user?.close();
  });

  it("run as printed (no undefined name) with functions, firestore and uid, and like the counter", async () => {
    const counterId = `hint-${randomUUID().slice(0, 8)}`;
    await admin.call("createCounter", { counterId, unique: true, numShards: 2 });
    const printed: unknown[][] = [];
    const console = { log: (...args: unknown[]) => printed.push(args) };
    // The printed lines in a context that has only what the hint says they need: any other name throws.
    const body = `(async () => {\n"use strict";\n${appLines(counterId).join("\n")}\n})()`;
    const context = { createCounterClient, functions: user.functions, firestore: user.firestore, uid: user.user.uid, console };
    await (runInNewContext(body, context) as Promise<void>);
    const deadline = Date.now() + 30_000;
    while (JSON.stringify(printed.at(-1)) !== JSON.stringify(["likes:", 1, "you like it:", true]) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(printed.at(-1)).toEqual(["likes:", 1, "you like it:", true]);
    // What the lines printed is the client's view (the like shows at once); the rollup commits the
    // parent's total a moment later, and that committed total must be exactly the one like.
    const committed = await waitFor(async () => (await admin.readCounter(counterId))?.total, 1, 30_000);
    expect(committed.value).toBe(1);
  });
});

