// The app's default firebase-admin app, which the deployed functions (entry/deps.ts) and the admin entry
// (admin/options.ts) run on: the app's own when its code initialized one, else one initialized at the first
// run. Never at import: importing the package changes nothing in the app.
import { getApp, getApps, initializeApp, type App } from "firebase-admin/app";

/** firebase-admin's name for the default app. */
const DEFAULT_APP = "[DEFAULT]";

/**
 * The default admin app: the app's own when its code initialized one, else one initialized now. Looked up
 * by name: in the functions emulator getApps() is not empty before any code initializes an app, yet the
 * default app does not exist, so "getApps().length ? getApp() : initializeApp()" throws there.
 */
export function defaultApp(): App {
  return getApps().some((app) => app.name === DEFAULT_APP) ? getApp() : initializeApp();
}
