// The params as data, for the tools and the package's files: every param config/params.ts declares, in
// the order it declares them, with its type, default and description. params.env (the package's
// defaults, one NAME=value line each) and the .env that `firestore-exact-counter init` writes come from
// here, and a unit test keeps params.env and functions/.env equal to it, so a new param needs nothing but
// its declaration and its value lines. Not imported by the deployed functions.
import { declaredParams } from "firebase-functions/params";
import * as params from "./params";

export interface ParamInfo {
  name: string;
  type: string;
  /** The default as .env text ("" for an empty string); undefined when the param has none. */
  default: string | undefined;
  description: string;
}

interface DeclaredParam {
  name: string;
  options?: { default?: unknown; description?: string };
  constructor: { type?: string };
}

function isParam(value: unknown): value is DeclaredParam {
  return typeof value === "object" && value !== null && typeof (value as { name?: unknown }).name === "string" && "options" in value;
}

/**
 * Every param of config/params.ts. firebase-functions keeps the params a process declares in declaration
 * order (a module namespace would list them alphabetically); only ours are taken from that list.
 */
export function paramList(): ParamInfo[] {
  const ours = new Set(Object.values(params as Record<string, unknown>).filter(isParam).map((p) => p.name));
  const declared = (declaredParams as unknown[]).filter(isParam).filter((p) => ours.has(p.name));
  if (declared.length !== ours.size) throw new Error(`firebase-functions lists ${declared.length} of the ${ours.size} params of config/params.ts`);
  return declared.map((p) => {
    const fallback = p.options?.default;
    return {
      name: p.name,
      type: p.constructor.type ?? "string",
      default: typeof fallback === "string" || typeof fallback === "number" || typeof fallback === "boolean" ? String(fallback) : undefined,
      description: p.options?.description ?? "",
    };
  });
}

/** params.env: every param with its default, one NAME=value line each. */
export function paramsEnv(list: ParamInfo[] = paramList()): string {
  return list.map((p) => `${p.name}=${p.default ?? ""}\n`).join("");
}
