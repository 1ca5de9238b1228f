// What reconcile, backfill and migrate-extension run: the admin SDK and the functions' admin entry, loaded
// when a run starts (--help and argument mistakes load neither). The entry's code logs through
// firebase-functions' logger, which writes its debug and info lines to stdout with the console it finds when
// it loads: info lines go to stderr, so that stdout carries the command's report alone (reconcile --json is
// read a line at a time); debug lines are the functions' own diagnostics (a JSON line saying a fresh project
// has published no params yet, on every run that writes), not for an operator's terminal: they go nowhere.
import type * as AdminApp from "firebase-admin/app";
import type * as AdminEntry from "@firestore-exact-counter/functions/admin";

export async function loadAdminEntry(): Promise<[typeof AdminApp, typeof AdminEntry]> {
  console.debug = () => undefined;
  console.info = console.error;
  return await Promise.all([import("firebase-admin/app"), import("@firestore-exact-counter/functions/admin")]);
}
