// The settings (model/settings.ts) read from an environment (process.env unless told otherwise), for the
// admin entry (admin.ts): an app's own functions and scripts run it, outside the counters codebase, where
// declaring the params (config/params.ts) would make firebase-tools ask the app's codebase for every one of
// them; and for the tools, which read a codebase's .env files. A param the environment does not set has its
// declared default (params.ts); docs/admin.md says where the values come from. Pure.
import { PARAMS } from "./params";
import { settingsOf, type Settings } from "./settings";

export function envSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  return settingsOf((name) => env[name] ?? String(PARAMS[name].default), (problem) => new Error(settingError(problem)));
}

function settingError(problem: string): string {
  return `${problem}: set it in the environment of this process, the same value as in the counters codebase's .env (docs/admin.md)`;
}
