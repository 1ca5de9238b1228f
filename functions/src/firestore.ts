// The Firestore database the counters live in: the DATABASE_ID param, the same one the trigger listens
// to (triggers.ts), so a named database gets its callables' writes and its rollups in one place.
import { getFirestore, type Firestore } from "firebase-admin/firestore";
import { databaseId } from "./params";

/** The counters' database; "(default)" unless DATABASE_ID names another one. */
export function countersDb(): Firestore {
  return getFirestore(databaseId.value());
}
