// What any Firestore rules file must keep for the counters (docs/security.md, "Firestore rules"), as one
// table: each guarantee is a statement and the client requests (probes) that show it, each as
// signed-out, signed-in and admin-claim callers. The rules test tier runs this table on
// firestore.rules, and check-rules (and init) on any file (an app's rules with our block in them), so
// both check the same expectations. Pure data: rules-check.ts runs it in the emulator.
import { BOARDS, CLEANUP, COUNTERS, ENTRIES, LEASE_ID, PENDING_ID, REQUESTS, ROLLUP } from "../../../functions/src/model/paths";
import { PARAMS_PARENT_ID } from "../../../functions/src/model/deployed-params";

export type Caller = "signed-out" | "signed-in" | "admin";

export const CALLERS: Record<Caller, { label: string; uid?: string; claims?: Record<string, unknown> }> = {
  "signed-out": { label: "signed-out clients" },
  "signed-in": { label: "signed-in users", uid: "alice" },
  // The admin claim lets a user call the admin callables; it must give nothing in Firestore.
  admin: { label: "users with the admin claim", uid: "root", claims: { admin: true } },
};

export const ALL_CALLERS: Caller[] = ["signed-out", "signed-in", "admin"];

/** A user other than every caller: whose member document and membership record nobody may read. */
export const OTHER_UID = "bob";

/**
 * get, create, update, delete: one document; list: a collection query; group: a collection-group query
 * (what a rule under a recursive wildcard `{document=**}` opens too).
 */
export type Operation = "get" | "list" | "group" | "create" | "update" | "delete";

export interface Probe {
  caller: Caller;
  operation: Operation;
  /** A document path (get, create, update, delete), a collection path (list) or a collection id (group). */
  target: string;
  /** The document as it is before the probe (get, update, delete); absent when undefined. */
  seed?: Record<string, unknown>;
  /** What create and update write. */
  data?: Record<string, unknown>;
}

export interface Guarantee {
  /** What holds, as check-rules prints it. */
  statement: string;
  /** Whether every probe must be allowed (true) or denied (false). */
  allowed: boolean;
  /** What a broken probe shows, after its caller's label and "can"/"cannot". */
  breach: string;
  probes: Probe[];
}

/** One line per caller whose probes broke a guarantee, e.g. "signed-in users can write counters/{id}/shards/{n}". */
export function breachLine(guarantee: Guarantee, caller: Caller): string {
  return `${CALLERS[caller].label} ${guarantee.allowed ? "cannot" : "can"} ${guarantee.breach}`;
}

// Stored shapes, close enough to the real documents that a rule reading them behaves as it would.
const PARENT = { numShards: 1, total: 7 };
const SHARD = { count: 1 };
const REQUEST = { shard: 0, delta: 1 };
const LEASE = { slot: 1, eventId: "e" };
const MEMBER = { joinedAt: 1 };
const MEMBERSHIP = { member: true, changedAt: 2, previousChangedAt: 1 };
const SUMMARY = { of: 3, bounds: [10], counts: [2, 1] };
const ENTRY = { total: 12, changedAt: 1 };

function buildGuarantees(): Guarantee[] {
  // Every probe gets a counter of its own, so a write that one (broken) rule allows cannot change what
  // another probe sees, and the probes can run in any order or all at once.
  let next = 0;
  const counter = () => `counters/rules-check-${next++}`;
  // Leaderboards live below the id no counter can have: a board of its own per probe.
  const boards = `${COUNTERS}/${PARAMS_PARENT_ID}/${BOARDS}`;
  const board = () => `${boards}/rules-check-${next++}`;
  const per = (callers: Caller[], probes: (caller: Caller) => Probe[]) => callers.flatMap(probes);
  const uidOf = (caller: Caller) => CALLERS[caller].uid ?? CALLERS["signed-in"].uid!;

  /** get, list and collection-group query of a subcollection's documents. */
  const reads = (collection: string, id: string, seed: Record<string, unknown>) => (caller: Caller): Probe[] => [
    { caller, operation: "get", target: `${counter()}/${collection}/${id}`, seed },
    { caller, operation: "list", target: `${counter()}/${collection}` },
    { caller, operation: "group", target: collection },
  ];
  /** create (absent document), update and delete (present document). */
  const writes = (path: () => string, seed: Record<string, unknown>) => (caller: Caller): Probe[] => [
    { caller, operation: "create", target: path(), data: seed },
    { caller, operation: "update", target: path(), seed, data: { ...seed, changed: true } },
    { caller, operation: "delete", target: path(), seed },
  ];
  const under = (rest: string) => () => `${counter()}/${rest}`;
  const subcollection = (name: string, path: string, id: string, seed: Record<string, unknown>): Guarantee[] => [
    {
      statement: `clients cannot read ${path}`,
      allowed: false,
      breach: `read ${path}`,
      probes: per(ALL_CALLERS, reads(name, id, seed)),
    },
    {
      statement: `clients cannot write ${path}`,
      allowed: false,
      breach: `write ${path}`,
      probes: per(ALL_CALLERS, writes(under(`${name}/${id}`), seed)),
    },
  ];

  /** A collection of one document per user (members, memberships): each user may get their own, nobody more. */
  const ownDocuments = (name: string, seed: Record<string, unknown>): Guarantee[] => {
    const path = `counters/{id}/${name}/{uid}`;
    return [
      {
        statement: `signed-in users can get their own ${path}, present or absent`,
        allowed: true,
        breach: `get their own ${path}`,
        probes: per(["signed-in", "admin"], (caller) => [
          { caller, operation: "get", target: `${counter()}/${name}/${uidOf(caller)}`, seed },
          { caller, operation: "get", target: `${counter()}/${name}/${uidOf(caller)}` },
        ]),
      },
      {
        statement: `nobody can get another user's ${path}`,
        allowed: false,
        breach: `get another user's ${path}`,
        probes: per(ALL_CALLERS, (caller) => [{ caller, operation: "get", target: `${counter()}/${name}/${OTHER_UID}`, seed }]),
      },
      {
        statement: `clients cannot list or query counters/{id}/${name}`,
        allowed: false,
        breach: `list or query counters/{id}/${name}`,
        probes: per(ALL_CALLERS, (caller) => [
          { caller, operation: "list", target: `${counter()}/${name}` },
          { caller, operation: "group", target: name },
        ]),
      },
      {
        statement: `clients cannot write ${path}, their own or another user's`,
        allowed: false,
        breach: `write ${path}`,
        probes: per(ALL_CALLERS, (caller) => [
          ...writes(under(`${name}/${uidOf(caller)}`), seed)(caller),
          { caller, operation: "create", target: `${counter()}/${name}/${OTHER_UID}`, data: seed },
        ]),
      },
    ];
  };

  return [
    {
      statement: "anyone can get counters/{id} (its total), signed in or not",
      allowed: true,
      breach: "get counters/{id}",
      probes: per(ALL_CALLERS, (caller) => [{ caller, operation: "get", target: counter(), seed: PARENT }]),
    },
    {
      statement: "clients cannot list or query counters",
      allowed: false,
      breach: "list or query counters",
      probes: per(ALL_CALLERS, (caller) => [
        { caller, operation: "list", target: "counters" },
        { caller, operation: "group", target: "counters" },
      ]),
    },
    {
      statement: "clients cannot write counters/{id}",
      allowed: false,
      breach: "write counters/{id}",
      probes: per(ALL_CALLERS, writes(counter, PARENT)),
    },
    ...subcollection("shards", "counters/{id}/shards/{n}", "0", SHARD),
    ...subcollection(REQUESTS, `counters/{id}/${REQUESTS}/{requestId}`, "tap-1", REQUEST),
    ...subcollection(ROLLUP, `counters/{id}/${ROLLUP}/${LEASE_ID}`, LEASE_ID, LEASE),
    ...ownDocuments("members", MEMBER),
    ...ownDocuments("memberships", MEMBERSHIP),
    {
      statement: `anyone can get a leaderboard's summary ${boards}/{board}, signed in or not`,
      allowed: true,
      breach: "get a leaderboard's summary",
      probes: per(ALL_CALLERS, (caller) => [{ caller, operation: "get", target: board(), seed: SUMMARY }]),
    },
    {
      statement: `anyone can count a leaderboard's entries (a query of ${boards}/{board}/${ENTRIES}), signed in or not`,
      allowed: true,
      breach: "count a leaderboard's entries",
      probes: per(ALL_CALLERS, (caller) => [{ caller, operation: "list", target: `${board()}/${ENTRIES}` }]),
    },
    {
      statement: "clients cannot get one entry of a leaderboard, list the leaderboards, or query entries or boards across them",
      allowed: false,
      breach: "read leaderboards beyond a summary and a count of its entries",
      probes: per(ALL_CALLERS, (caller) => [
        { caller, operation: "get", target: `${board()}/${ENTRIES}/e1`, seed: ENTRY },
        { caller, operation: "list", target: boards },
        { caller, operation: "group", target: ENTRIES },
        { caller, operation: "group", target: BOARDS },
      ]),
    },
    {
      statement: "clients cannot write a leaderboard's summary or entries",
      allowed: false,
      breach: "write a leaderboard's summary or entries",
      probes: per(ALL_CALLERS, (caller) => [...writes(board, SUMMARY)(caller), ...writes(() => `${board()}/${ENTRIES}/e1`, ENTRY)(caller)]),
    },
    {
      statement: "clients cannot read or write any other document under counters/{id}",
      allowed: false,
      breach: "read or write other documents under counters/{id}",
      probes: per(ALL_CALLERS, (caller) => [
        { caller, operation: "get", target: `${counter()}/${CLEANUP}/${PENDING_ID}`, seed: { since: 1 } },
        // A board's documents anywhere but below the id no counter can have.
        { caller, operation: "get", target: `${counter()}/${BOARDS}/b`, seed: SUMMARY },
        { caller, operation: "list", target: `${counter()}/${BOARDS}/b/${ENTRIES}` },
        { caller, operation: "create", target: `${counter()}/anything/else`, data: { any: 1 } },
      ]),
    },
  ];
}

export const GUARANTEES: readonly Guarantee[] = buildGuarantees();
