// The counters' settings read from an environment (process.env unless told otherwise), for the admin entry
// (admin.ts): an app's own functions and scripts run it, outside the counters codebase, where declaring the
// params (config/params.ts) would make firebase-tools ask the app's codebase for every one of them; and for
// the tools, which read a codebase's .env files. The same names, defaults (params.ts), ranges
// (param-rules.ts) and parsers as the callables', read when an operation needs them, so a value means the
// same thing on both sides; docs/admin.md says where the values come from. Pure.
import { autoCreateTarget, parseAutoCreateRules } from "./auto-create-rules";
import { parseExtensionRules, sourcesOfCounter } from "./extension-rules";
import { parseDocumentCounterRules, ruleNaming } from "./document-rules";
import { kindFor, parseCounterKindRules } from "./kinds";
import { mirrorTargets, parseMirrorRules } from "./mirror-rules";
import { parseCounterIdPatterns } from "./patterns";
import { operationLimits, type CounterSettings } from "./settings";
import { paramProblem, relationProblems } from "./param-rules";
import { COUNTER_PARAM_DEFAULTS, type CounterParamName } from "./params";

/** The admin entry's settings: the operations' (model/settings.ts) and the counters' database. */
export interface EnvSettings extends CounterSettings {
  /** DATABASE_ID: the database the counters live in. */
  databaseId(): string;
}

export function envSettings(env: NodeJS.ProcessEnv = process.env): EnvSettings {
  const text = (name: CounterParamName): string => env[name] ?? String(COUNTER_PARAM_DEFAULTS[name]);
  const checked = (name: CounterParamName): string => {
    const value = text(name);
    const problem = paramProblem(name, value);
    if (problem !== undefined) throw new Error(settingError(problem));
    return value;
  };
  const int = (name: CounterParamName): number => Number(checked(name));
  return {
    databaseId: () => checked("DATABASE_ID"),
    limits: () => {
      const values = {
        DEFAULT_SHARDS: int("DEFAULT_SHARDS"),
        MAX_SHARDS: int("MAX_SHARDS"),
        MAX_GROWN_SHARDS: int("MAX_GROWN_SHARDS"),
        MAX_DELTA: int("MAX_DELTA"),
        REQUEST_TTL_HOURS: int("REQUEST_TTL_HOURS"),
      };
      const problem = relationProblems(values)[0];
      if (problem !== undefined) throw new Error(settingError(problem));
      return operationLimits(values);
    },
    uniquePatterns: () => parseCounterIdPatterns("UNIQUE_COUNTERS", text("UNIQUE_COUNTERS")),
    windowedPatterns: () => parseCounterIdPatterns("WINDOWED_COUNTERS", text("WINDOWED_COUNTERS")),
    kindFor: (counterId, limits) => kindFor(parseCounterKindRules("COUNTER_KINDS", text("COUNTER_KINDS"), limits), counterId),
    mirrorsFor: (counterId) => mirrorTargets(parseMirrorRules("MIRRORS", text("MIRRORS")), counterId),
    autoCreateFor: (counterId) => autoCreateTarget(parseAutoCreateRules("AUTO_CREATE", text("AUTO_CREATE")), counterId),
    extensionSourcesFor: (counterId) => sourcesOfCounter(parseExtensionRules("EXTENSION_COUNTERS", text("EXTENSION_COUNTERS")), counterId),
    documentRuleFor: (counterId) => ruleNaming(parseDocumentCounterRules("DOCUMENT_COUNTERS", text("DOCUMENT_COUNTERS")), counterId)?.source,
  };
}

function settingError(problem: string): string {
  return `${problem}: set it in the environment of this process, the same value as in the counters codebase's .env (docs/admin.md)`;
}
