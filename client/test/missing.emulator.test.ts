// watch() and watchMember() of a counter that does not exist, with the real Firebase JS SDK against the
// emulators: told to onError as a CounterNotFoundError (code not-found) once per absence while the watch
// goes on, instead of null for ever; and, with { autoCreated: true }, a counter that its first increment or
// like creates (the server's AUTO_CREATE): 0 until then, the tap shown at once, and never a value that the
// creation takes back. The server here runs without AUTO_CREATE, so the transports do what AUTO_CREATE
// does on a first call: create the counter in a commit of its own, then apply the call.
import { httpsCallable } from "firebase/functions";
import { CounterNotFoundError, createCounterClient, type CounterView, type MemberView } from "../src";
import { e2eAdminDb } from "../../test/helpers/admin";
import { shardSumIn } from "../../test/helpers/documents";
import { pause, threeUsers, until } from "../../test/helpers/client-users";

jest.setTimeout(120_000);

const db = e2eAdminDb();
const users = threeUsers();
let serial = 0;
const freshId = (prefix: string) => `${prefix}-${Date.now()}x${serial++}`;

describe("watch of a counter that does not exist", () => {
  it("shows null and tells onError once, with code not-found and the fix; then shows the counter once it is created, and tells again once it is deleted", async () => {
    const counterId = freshId("missing");
    const client = createCounterClient({ functions: users.user.functions, firestore: users.user.firestore });
    const values: (number | null)[] = [];
    const errors: Error[] = [];
    const stop = client.watch(counterId, (value) => values.push(value), (error) => errors.push(error));
    await until(() => errors.length === 1);
    expect(values).toEqual([null]);
    expect(errors[0]).toBeInstanceOf(CounterNotFoundError);
    expect(errors[0]).toMatchObject({ name: "CounterNotFoundError", code: "not-found", counterId });
    expect(errors[0]!.message).toBe(
      `counters/${counterId} does not exist: create it (createCounter, or the admin entry in your own functions), or, for an id that AUTO_CREATE ` +
        "creates on its first increment or like, watch it with { autoCreated: true } to show 0 until then",
    );
    await users.admin.call("createCounter", { counterId });
    await until(() => values.includes(0));
    await users.other.call("incrementCounter", { counterId, delta: 2 });
    await until(() => values.includes(2));
    expect(errors).toHaveLength(1);
    await users.admin.call("deleteCounter", { counterId });
    await until(() => errors.length === 2);
    expect(values[values.length - 1]).toBeNull();
    await pause(500);
    expect(errors).toHaveLength(2);
    stop();
  });

  it("tells each watch of the counter, a window's too, and none with { autoCreated: true }", async () => {
    const counterId = freshId("missing");
    const client = createCounterClient({ functions: users.user.functions, firestore: users.user.firestore });
    const told: string[] = [];
    const shown: [string, number | null][] = [];
    const stops = [
      client.watch(counterId, (v) => shown.push(["total", v]), (e) => told.push(`total: ${e.name}`)),
      client.watch(counterId, (v) => shown.push(["today", v]), (e) => told.push(`today: ${e.name}`), { window: "today" }),
      client.watch(counterId, (v) => shown.push(["auto", v]), (e) => told.push(`auto: ${e.name}`), { autoCreated: true }),
    ];
    await until(() => told.length === 2);
    await pause(300);
    expect(told.sort()).toEqual(["today: CounterNotFoundError", "total: CounterNotFoundError"]);
    expect(shown).toEqual(expect.arrayContaining([["total", null], ["today", null], ["auto", 0]]));
    stops.forEach((stop) => stop());
  });

  it("refuses an option it does not know, and an autoCreated that is not a boolean, before listening", () => {
    const client = createCounterClient({ functions: users.user.functions, firestore: users.user.firestore });
    expect(() => client.watch("x", () => undefined, undefined, { autocreated: true } as never)).toThrow("options.autocreated is not an option (the options are window, autoCreated)");
    expect(() => client.watch("x", () => undefined, undefined, { autoCreated: "yes" } as never)).toThrow("options.autoCreated must be a boolean");
    expect(() => client.watchMember("x", "u", () => undefined, undefined, { window: "today" } as never)).toThrow("options.window is not an option (the options are autoCreated)");
  });
});

describe("watch with { autoCreated: true } of a counter that its first increment creates", () => {
  it("shows 0, then the tap at once, and stays exact through the creation and the rollup (never back to 0, never 2)", async () => {
    const counterId = freshId("auto-views");
    const createCounter = httpsCallable(users.user.functions, "createCounter");
    const incrementCounter = httpsCallable(users.user.functions, "incrementCounter");
    let held!: () => void;
    const release = new Promise<void>((resolve) => (held = resolve));
    const client = createCounterClient({
      functions: users.user.functions,
      firestore: users.user.firestore,
      // AUTO_CREATE's first call: the counter in a commit of its own, then the increment; held back first,
      // so the tap is shown while nothing exists yet.
      call: async (request) => {
        await release;
        await createCounter({ counterId: request.counterId }).catch(() => undefined);
        return (await incrementCounter(request)).data;
      },
    });
    const emissions: { value: number | null; view: CounterView }[] = [];
    const errors: Error[] = [];
    const stop = client.watch(counterId, (value, view) => emissions.push({ value, view }), (e) => errors.push(e), { autoCreated: true });
    await until(() => emissions.length > 0);
    expect(emissions[0]).toMatchObject({ value: 0, view: { exists: false, total: 0, pending: 0 } });
    const tap = client.increment(counterId);
    await until(() => emissions.some((e) => e.value === 1));
    expect(emissions[emissions.length - 1]).toMatchObject({ value: 1, view: { exists: false, pending: 1 } });
    held();
    await tap;
    await until(() => emissions.some((e) => e.view.exists && e.view.total === 1 && e.view.pending === 0));
    const afterTap = emissions.slice(emissions.findIndex((e) => e.value === 1));
    expect(afterTap.map((e) => e.value)).toEqual(afterTap.map(() => 1));
    expect(errors).toEqual([]);
    expect(await shardSumIn(db, counterId)).toBe(1);
    stop();
  });

  it("takes a refused tap back to 0 (the server creates nothing: no AUTO_CREATE rule here)", async () => {
    const counterId = freshId("auto-refused");
    const client = createCounterClient({ functions: users.user.functions, firestore: users.user.firestore });
    const values: (number | null)[] = [];
    const stop = client.watch(counterId, (value) => values.push(value), undefined, { autoCreated: true });
    await until(() => values.length > 0);
    await expect(client.increment(counterId)).rejects.toMatchObject({ code: "not-found" });
    await until(() => values[values.length - 1] === 0);
    expect(values).toEqual([0, 1, 0]);
    stop();
  });
});

describe("watchMember of a counter that does not exist", () => {
  it("shows null and tells onError once; with { autoCreated: true }, 0, then the first like at once, exact through the creation", async () => {
    const counterId = freshId("auto-likes");
    const createCounter = httpsCallable(users.user.functions, "createCounter");
    const setMember = httpsCallable(users.user.functions, "setMember");
    let held!: () => void;
    const release = new Promise<void>((resolve) => (held = resolve));
    const client = createCounterClient({
      functions: users.user.functions,
      firestore: users.user.firestore,
      callSetMember: async (request) => {
        await release;
        await createCounter({ counterId: request.counterId, unique: true }).catch(() => undefined);
        return (await setMember(request)).data;
      },
    });
    const uid = users.user.user.uid;
    const errors: Error[] = [];
    const plain: (number | null)[] = [];
    const stopPlain = createCounterClient({ functions: users.other.functions, firestore: users.other.firestore }).watchMember(
      counterId,
      users.other.user.uid,
      (value) => plain.push(value),
      (error) => errors.push(error),
    );
    const emissions: { value: number | null; view: MemberView }[] = [];
    const stop = client.watchMember(counterId, uid, (value, view) => emissions.push({ value, view }), (e) => errors.push(e), { autoCreated: true });
    await until(() => emissions.length > 0 && errors.length === 1);
    expect(plain).toEqual([null]);
    expect(errors[0]).toMatchObject({ name: "CounterNotFoundError", code: "not-found" });
    expect(emissions[0]).toMatchObject({ value: 0, view: { exists: false, member: false } });
    const like = client.setMember(counterId, true);
    await until(() => emissions.some((e) => e.value === 1));
    held();
    await like;
    await until(() => emissions.some((e) => e.view.exists && e.view.total === 1 && e.view.pending === 0));
    const afterLike = emissions.slice(emissions.findIndex((e) => e.value === 1));
    expect(afterLike.map((e) => [e.value, e.view.member])).toEqual(afterLike.map(() => [1, true]));
    await until(() => plain.includes(1));
    expect(errors).toHaveLength(1);
    stop();
    stopPlain();
  });
});
