// Hostile input against all six callables: every case must fail with the exact error code, a message
// that names the field and echoes at most a short prefix of the bad value, and leave every document
// under the counter exactly as it was.
import type { CallableFunction } from "firebase-functions/v2/https";
import { ADMIN, USER, call, db, functions, httpsErrorOf, uniqueId, type Caller } from "../../test/helpers/functions";
import { documentsUnderIn } from "../../test/helpers/documents";
import { requireEmulators } from "../../test/helpers/emulators";

beforeAll(requireEmulators);

type Fn = CallableFunction<unknown, Promise<unknown>>;
const HUGE = "x".repeat(1_000_000);
const LONG_PREFIX = "x".repeat(41);

interface Case {
  name: string;
  fn: Fn;
  caller: Caller | null;
  data: (counterId: string) => unknown;
  code: string;
  message: RegExp;
}

const { createCounter, incrementCounter, setMember, resetCounter, reshardCounter, deleteCounter } = functions;

/** A request body as the callable decoder leaves it: a "__proto__" key becomes the prototype. */
function decodedWithProto(own: Record<string, unknown>, proto: Record<string, unknown>): unknown {
  return Object.setPrototypeOf({ ...own }, proto) as unknown;
}

const cases: Case[] = [
  // createCounter
  { name: "counterId a number", fn: createCounter, caller: USER, data: () => ({ counterId: 7 }), code: "invalid-argument", message: /counterId must be a string/ },
  { name: "counterId a boolean", fn: createCounter, caller: USER, data: () => ({ counterId: true }), code: "invalid-argument", message: /counterId must be a string/ },
  { name: "counterId an array", fn: createCounter, caller: USER, data: (id) => ({ counterId: [id] }), code: "invalid-argument", message: /counterId must be a string/ },
  { name: "counterId a nested object", fn: createCounter, caller: USER, data: (id) => ({ counterId: { id } }), code: "invalid-argument", message: /counterId must be a string/ },
  { name: "counterId of 1 MB", fn: createCounter, caller: USER, data: () => ({ counterId: HUGE }), code: "invalid-argument", message: /counterId must be 1-128 characters/ },
  { name: "counterId with unicode", fn: createCounter, caller: USER, data: () => ({ counterId: "likes-é" }), code: "invalid-argument", message: /counterId/ },
  { name: "counterId '..'", fn: createCounter, caller: USER, data: () => ({ counterId: ".." }), code: "invalid-argument", message: /counterId/ },
  { name: "numShards as an array", fn: createCounter, caller: USER, data: (id) => ({ counterId: id, numShards: [3] }), code: "invalid-argument", message: /numShards must be a number/ },
  { name: "numShards negative", fn: createCounter, caller: USER, data: (id) => ({ counterId: id, numShards: -3 }), code: "invalid-argument", message: /numShards must be an integer from 1 to 200/ },
  { name: "numShards huge", fn: createCounter, caller: USER, data: (id) => ({ counterId: id, numShards: 1e12 }), code: "invalid-argument", message: /numShards/ },
  { name: "numShards null", fn: createCounter, caller: USER, data: (id) => ({ counterId: id, numShards: null }), code: "invalid-argument", message: /numShards must be a number/ },
  { name: "a __proto__ key (JSON.parse own property)", fn: createCounter, caller: USER, data: (id) => JSON.parse(`{"counterId":"${id}","__proto__":{"numShards":3}}`) as unknown, code: "invalid-argument", message: /unknown field "__proto__"/ },
  { name: "a __proto__ key (decoded into the prototype)", fn: createCounter, caller: USER, data: (id) => decodedWithProto({ counterId: id }, { numShards: 3 }), code: "invalid-argument", message: /unknown field "__proto__"/ },
  { name: "a constructor key", fn: createCounter, caller: USER, data: (id) => ({ counterId: id, constructor: { prototype: { admin: true } } }), code: "invalid-argument", message: /unknown field "constructor"/ },
  { name: "a huge unknown key", fn: createCounter, caller: USER, data: (id) => ({ counterId: id, [HUGE]: 1 }), code: "invalid-argument", message: /unknown field "x{32}"/ },
  { name: "data missing", fn: createCounter, caller: USER, data: () => undefined, code: "invalid-argument", message: /data must be an object/ },
  { name: "data a string", fn: createCounter, caller: USER, data: (id) => id, code: "invalid-argument", message: /data must be an object/ },
  { name: "data a number", fn: createCounter, caller: USER, data: () => 42, code: "invalid-argument", message: /data must be an object/ },
  { name: "unique a string", fn: createCounter, caller: USER, data: (id) => ({ counterId: id, unique: "true" }), code: "invalid-argument", message: /unique must be a boolean/ },
  { name: "unique a number", fn: createCounter, caller: USER, data: (id) => ({ counterId: id, unique: 1 }), code: "invalid-argument", message: /unique must be a boolean/ },
  { name: "unique null", fn: createCounter, caller: USER, data: (id) => ({ counterId: id, unique: null }), code: "invalid-argument", message: /unique must be a boolean/ },
  { name: "unique an object", fn: createCounter, caller: USER, data: (id) => ({ counterId: id, unique: { value: true } }), code: "invalid-argument", message: /unique must be a boolean/ },
  // incrementCounter
  { name: "delta a nested object", fn: incrementCounter, caller: USER, data: (id) => ({ counterId: id, delta: { value: 1 } }), code: "invalid-argument", message: /delta must be a number/ },
  { name: "delta an array", fn: incrementCounter, caller: USER, data: (id) => ({ counterId: id, delta: [1] }), code: "invalid-argument", message: /delta must be a number/ },
  { name: "delta a boolean", fn: incrementCounter, caller: USER, data: (id) => ({ counterId: id, delta: true }), code: "invalid-argument", message: /delta must be a number/ },
  { name: "delta a 1 MB string", fn: incrementCounter, caller: USER, data: (id) => ({ counterId: id, delta: HUGE }), code: "invalid-argument", message: /delta must be a number/ },
  { name: "delta -0", fn: incrementCounter, caller: USER, data: (id) => ({ counterId: id, delta: -0 }), code: "invalid-argument", message: /delta must be a non-zero integer/ },
  { name: "requestId of 1 MB", fn: incrementCounter, caller: USER, data: (id) => ({ counterId: id, requestId: HUGE }), code: "invalid-argument", message: /requestId must be 1-128 characters/ },
  { name: "requestId an object", fn: incrementCounter, caller: USER, data: (id) => ({ counterId: id, requestId: { id: "a" } }), code: "invalid-argument", message: /requestId must be a string/ },
  { name: "counterId null", fn: incrementCounter, caller: USER, data: () => ({ counterId: null }), code: "invalid-argument", message: /counterId must be a string/ },
  { name: "a __proto__ key on increment", fn: incrementCounter, caller: USER, data: (id) => JSON.parse(`{"counterId":"${id}","__proto__":{"delta":1000}}`) as unknown, code: "invalid-argument", message: /unknown field "__proto__"/ },
  { name: "data null", fn: incrementCounter, caller: USER, data: () => null, code: "invalid-argument", message: /data must be an object/ },
  { name: "data an array of payloads", fn: incrementCounter, caller: USER, data: (id) => [{ counterId: id }], code: "invalid-argument", message: /data must be an object/ },
  // setMember
  { name: "member missing", fn: setMember, caller: USER, data: (id) => ({ counterId: id }), code: "invalid-argument", message: /member must be a boolean/ },
  { name: "member a string", fn: setMember, caller: USER, data: (id) => ({ counterId: id, member: "true" }), code: "invalid-argument", message: /member must be a boolean/ },
  { name: "member a number", fn: setMember, caller: USER, data: (id) => ({ counterId: id, member: 1 }), code: "invalid-argument", message: /member must be a boolean/ },
  { name: "member null", fn: setMember, caller: USER, data: (id) => ({ counterId: id, member: null }), code: "invalid-argument", message: /member must be a boolean/ },
  { name: "member an array", fn: setMember, caller: USER, data: (id) => ({ counterId: id, member: [true] }), code: "invalid-argument", message: /member must be a boolean/ },
  { name: "setMember: counterId missing", fn: setMember, caller: USER, data: () => ({ member: true }), code: "invalid-argument", message: /counterId/ },
  { name: "setMember: counterId a path", fn: setMember, caller: USER, data: (id) => ({ counterId: `${id}/members/x`, member: true }), code: "invalid-argument", message: /counterId must be 1-128 characters/ },
  { name: "setMember: another user's uid as a field", fn: setMember, caller: USER, data: (id) => ({ counterId: id, member: true, uid: "someone-else" }), code: "invalid-argument", message: /unknown field "uid"/ },
  { name: "setMember: a delta", fn: setMember, caller: USER, data: (id) => ({ counterId: id, member: true, delta: 1000 }), code: "invalid-argument", message: /unknown field "delta"/ },
  { name: "setMember: a __proto__ key", fn: setMember, caller: USER, data: (id) => JSON.parse(`{"counterId":"${id}","member":true,"__proto__":{"member":false}}`) as unknown, code: "invalid-argument", message: /unknown field "__proto__"/ },
  { name: "setMember: data null", fn: setMember, caller: USER, data: () => null, code: "invalid-argument", message: /data must be an object/ },
  { name: "setMember: signed out, even with hostile data", fn: setMember, caller: null, data: (id) => ({ counterId: id, member: "yes", extra: 1 }), code: "unauthenticated", message: /signed-in user/ },
  // resetCounter
  { name: "reset: counterId missing", fn: resetCounter, caller: ADMIN, data: () => ({}), code: "invalid-argument", message: /counterId/ },
  { name: "reset: an extra field", fn: resetCounter, caller: ADMIN, data: (id) => ({ counterId: id, total: 5 }), code: "invalid-argument", message: /unknown field "total"/ },
  { name: "reset: counterId an array", fn: resetCounter, caller: ADMIN, data: (id) => ({ counterId: [id] }), code: "invalid-argument", message: /counterId must be a string/ },
  { name: "reset: by a non-admin, even with hostile data", fn: resetCounter, caller: USER, data: (id) => ({ counterId: id, __proto__x: 1 }), code: "permission-denied", message: /admin/ },
  // reshardCounter
  { name: "reshard: numShards missing", fn: reshardCounter, caller: ADMIN, data: (id) => ({ counterId: id }), code: "invalid-argument", message: /numShards/ },
  { name: "reshard: numShards a string", fn: reshardCounter, caller: ADMIN, data: (id) => ({ counterId: id, numShards: "5" }), code: "invalid-argument", message: /numShards must be a number/ },
  { name: "reshard: numShards a float", fn: reshardCounter, caller: ADMIN, data: (id) => ({ counterId: id, numShards: 4.5 }), code: "invalid-argument", message: /numShards must be an integer/ },
  { name: "reshard: numShards 0", fn: reshardCounter, caller: ADMIN, data: (id) => ({ counterId: id, numShards: 0 }), code: "invalid-argument", message: /numShards/ },
  { name: "reshard: numShards above MAX_SHARDS", fn: reshardCounter, caller: ADMIN, data: (id) => ({ counterId: id, numShards: 10_000 }), code: "invalid-argument", message: /numShards/ },
  { name: "reshard: a constructor key", fn: reshardCounter, caller: ADMIN, data: (id) => ({ counterId: id, numShards: 3, constructor: 1 }), code: "invalid-argument", message: /unknown field "constructor"/ },
  // deleteCounter
  { name: "delete: counterId with a slash (path traversal)", fn: deleteCounter, caller: ADMIN, data: (id) => ({ counterId: `${id}/shards/0` }), code: "invalid-argument", message: /counterId/ },
  { name: "delete: counterId a nested object", fn: deleteCounter, caller: ADMIN, data: (id) => ({ counterId: { id } }), code: "invalid-argument", message: /counterId must be a string/ },
  { name: "delete: data null", fn: deleteCounter, caller: ADMIN, data: () => null, code: "invalid-argument", message: /data must be an object/ },
  { name: "delete: by a non-admin", fn: deleteCounter, caller: USER, data: (id) => ({ counterId: id }), code: "permission-denied", message: /admin/ },
];

/** Every document under the counter with its data, to prove a call changed nothing. */
async function snapshotOf(counterId: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const doc of await documentsUnderIn(db, counterId)) {
    out[doc.ref.path] = { data: doc.data(), updateTime: doc.updateTime?.toMillis() };
  }
  return out;
}

describe("hostile input", () => {
  it("has at least 45 cases covering all six callables", () => {
    expect(cases.length).toBeGreaterThanOrEqual(45);
    expect(new Set(cases.map((c) => c.fn)).size).toBe(6);
  });

  it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const counterId = uniqueId("hostile");
    await call(createCounter, { counterId, numShards: 3 }, ADMIN);
    await call(incrementCounter, { counterId, delta: 5, requestId: "seed" }, USER);
    const before = await snapshotOf(counterId);

    const { code, message } = await httpsErrorOf(call(c.fn, c.data(counterId), c.caller));
    expect(code).toBe(c.code);
    expect(message).toMatch(c.message);
    expect(message.length).toBeLessThan(200);
    expect(message).not.toContain(LONG_PREFIX);
    expect(message).not.toContain(counterId); // the id is never echoed back in a validation error
    expect(await snapshotOf(counterId)).toEqual(before);
  });
});
