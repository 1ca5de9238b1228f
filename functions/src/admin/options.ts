// What every admin entry call takes last: its options, checked the same way for each (an object, no
// unknown key, `app` a firebase-admin App), and the app it runs on.
import type { App } from "firebase-admin/app";
import { defaultApp } from "../default-app";
import { CounterError } from "../model/errors";
import { resembles } from "../model/near-names";

/** Every call's last argument may name the firebase-admin app to use (default: the default app). */
export interface AdminOptions {
  app?: App;
}

/** The options as an object with only `app` and `keys`, and `app` an App; a CounterError otherwise. */
export function checkedOptions(options: unknown, keys: readonly string[]): Record<string, unknown> {
  if (typeof options !== "object" || options === null || Array.isArray(options)) throw new CounterError("invalid-argument", "options must be an object");
  const { app, ...rest } = options as Record<string, unknown>;
  const unknown = Object.keys(rest).filter((key) => !keys.includes(key));
  if (unknown.length > 0) {
    const known = ["app", ...keys];
    const hint = resembles(unknown[0]!, known);
    const meant = hint === undefined ? "" : ` (did you mean ${JSON.stringify(hint)}?)`;
    throw new CounterError("invalid-argument", `unknown option ${JSON.stringify(unknown[0]!.slice(0, 32))}${meant}: the options are ${known.join(", ")}`);
  }
  if (app !== undefined && !isApp(app)) throw new CounterError("invalid-argument", "options.app must be a firebase-admin App (what initializeApp() returns)");
  return options as Record<string, unknown>;
}

function isApp(value: unknown): value is App {
  return typeof value === "object" && value !== null && typeof (value as { name?: unknown }).name === "string" && typeof (value as { options?: unknown }).options === "object";
}

/** The app a call runs on: the one its options name, else the app's default app (initialized if it has none). */
export function appOf(app: unknown): App {
  return (app as App | undefined) ?? defaultApp();
}
