// The naive codebase's Firestore: the default app's, initialized lazily, and only the default app
// (firebase-functions adds a named app of its own before this runs): the benchmark also imports these
// modules into a process that has its own default app.
import { getApps, initializeApp } from "firebase-admin/app";
import { getFirestore, type Firestore } from "firebase-admin/firestore";

export function naiveDb(): Firestore {
  if (!getApps().some((app) => app.name === "[DEFAULT]")) initializeApp();
  return getFirestore();
}
