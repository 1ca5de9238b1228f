// AUTO_CREATE at run time (auto-create-rules.ts says which ids, and which app document vouches for each):
// the first incrementCounter or setMember on a missing counter creates it, as createCounter would, and
// then applies the call as usual. The app's document is the authority, not CREATE_POLICY: a counter is
// created if and only if that document exists at the creation's commit and every condition the rule puts on
// it holds there (`posts/{id}[published==true]`: model/conditions.ts). A document that does not exist and
// one whose conditions do not hold get the same answer, so a caller learns no more than "not creatable".
//
// Why it is exact under concurrent first calls: the creation is one transaction that reads the parent,
// the deletion marker and the app's document, and creates the parent with `create()`. Two first calls
// cannot both create it (the second transaction sees the parent, or its create() fails and it reads
// again), and one that finds the counter already there simply goes on: every call then applies its own
// delta or membership with its own write, after the creation committed, so all of them count and the
// counter's `createdAt` is before every one of them (the coverage rule, docs/api.md). A counter still
// being deleted is not created under its cleanup (the marker), and a document deleted before the
// transaction's commit means no counter.
//
// What it costs: nothing on a counter that exists (the shape cache, shape.ts, only ever holds counters
// that exist, so a missing one is never hidden by it, and the app's document is read only when the
// counter was found missing). The first call pays one read of the app's document, then the creation's
// transaction (the parent, the marker, the document and the mirror targets read; what createCounter
// writes). A call for an id whose document does not exist stops after that one read.
import type { DocumentSnapshot, Firestore } from "firebase-admin/firestore";
import { writeNewCounter } from "./create";
import { CounterError } from "../model/errors";
import { allHold, conditionsText, type Condition } from "../model/conditions";
import type { ExtensionSource } from "../model/extension-rules";
import { extensionRefs } from "./extension-take";
import { mirrorRefs } from "./mirror-writes";
import { cleanupRef, counterRef } from "../model/paths";
import type { NewCounter } from "../model/settings";
import { ADMIN_TRANSACTION_ATTEMPTS, rememberShape, shapeIn, shapeOf, type CounterShape } from "./shape";

/** How a missing counter may create itself: asked only when a call finds it missing. */
export interface AutoCreate {
  /** The app's document that must exist (AUTO_CREATE, filled for this id). */
  document: string;
  /** What must hold on the document's data besides (none: its existence is enough). */
  conditions?: readonly Condition[];
  /** What the counter is created as (the params' shape for its id, and the extension's fields it takes over). */
  counter: () => NewCounter & { extension?: readonly ExtensionSource[] };
  /** Tests: runs after the document was found and before the creation's transaction (to delete it there). */
  beforeCreate?: () => void | Promise<void>;
}

/** The AUTO_CREATE rule for a counter id, looked up only once a call found the counter missing (undefined: none). */
export type AutoCreateLookup = () => AutoCreate | undefined;

/**
 * The shape of `counterId` as shapeOf reads it (cached unless `fresh`). A counter found missing is created
 * first when AUTO_CREATE names it: `refuse` says whether the call could apply to such a counter (a counter
 * is not created for a call that would then be refused), and the answer is the shape of the counter as it
 * is after the creation (made by this call or a concurrent one).
 */
export async function shapeOrCreate(
  db: Firestore,
  counterId: string,
  fresh: boolean,
  lookup: AutoCreateLookup | undefined,
  refuse: (shape: CounterShape) => CounterError | undefined,
): Promise<CounterShape> {
  try {
    return await shapeOf(db, counterId, fresh);
  } catch (error) {
    if (!(error instanceof CounterError && error.code === "not-found")) throw error;
    const auto = lookup?.();
    if (auto === undefined) throw error;
    return createOnFirstCall(db, counterId, auto, refuse);
  }
}

/**
 * Creates the missing `counterId` if its app document exists (see the header): not-found if it does not,
 * or while the id is still being deleted. A counter that exists by the time the transaction reads it (a
 * concurrent first call made it) is the answer as it is.
 */
export async function createOnFirstCall(
  db: Firestore,
  counterId: string,
  auto: AutoCreate,
  refuse: (shape: CounterShape) => CounterError | undefined,
): Promise<CounterShape> {
  const counter = auto.counter();
  const refusal = refuse(counter);
  if (refusal !== undefined) throw refusal;
  const document = db.doc(auto.document);
  // The common refusal (an id whose document does not exist, a typo or a hostile caller) costs this one read.
  if (!vouches(await document.get(), auto)) throw noDocument(counterId, auto);
  await auto.beforeCreate?.();
  const parent = counterRef(db, counterId);
  const shape = await db.runTransaction(
    async (tx): Promise<CounterShape> => {
      const [existing, marker, app] = await tx.getAll(parent, cleanupRef(db, counterId), document);
      if (existing!.exists) return shapeIn(counterId, existing!);
      if (marker!.exists) throw new CounterError("not-found", `counter "${counterId}" does not exist: it is still being deleted, and is not created again until that ends`);
      if (!vouches(app!, auto)) throw noDocument(counterId, auto);
      const mirrors = mirrorRefs(db, counter.mirrors);
      const more = [...mirrors, ...extensionRefs(db, counter)];
      const reads = more.length > 0 ? await tx.getAll(...more) : [];
      writeNewCounter(tx, db, counterId, counter, reads.slice(0, mirrors.length), Date.now, reads.slice(mirrors.length));
      return { numShards: counter.numShards, unique: counter.unique, windowed: counter.windowed };
    },
    { maxAttempts: ADMIN_TRANSACTION_ATTEMPTS },
  );
  rememberShape(counterId, shape);
  return shape;
}

/** Whether the app's document, as read, lets the counter create itself: it exists and every condition holds. */
function vouches(snap: DocumentSnapshot, auto: AutoCreate): boolean {
  return snap.exists && allHold(auto.conditions ?? [], snap.data());
}

/** The refusal, the same whether the document is missing or a condition does not hold (nothing more is revealed). */
function noDocument(counterId: string, auto: AutoCreate): CounterError {
  const conditions = auto.conditions ?? [];
  const holding = conditions.length > 0 ? ` with ${conditionsText(conditions)}` : "";
  return new CounterError("not-found", `counter "${counterId}" does not exist, and AUTO_CREATE creates it only while ${auto.document} exists${holding}`);
}
