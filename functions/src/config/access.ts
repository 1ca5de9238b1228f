// Who may create counters (CREATE_POLICY, docs/security.md "Who may create counters"), as one pure decision on
// the verified ID token's claims. No Firebase import: unit tests table-drive it, and entry/oncall.ts turns a
// refusal into the HttpsError.
import type { CreatePolicy } from "../model/param-rules";

/** The claims of a verified Firebase ID token this decision reads (absent: a caller with no user). */
export interface TokenClaims {
  admin?: unknown;
  firebase?: { sign_in_provider?: unknown };
}

/**
 * Why `policy` refuses a caller with these claims (a sentence that names the policy), or undefined when it
 * allows it. `signed-in` wants a user, anonymous Auth included: createCounter's auth gate (entry/oncall.ts)
 * already refuses a caller with no user, whatever ALLOW_UNAUTHENTICATED says, and the policy refuses one
 * too rather than rely on that. `non-anonymous` wants a sign-in provider that is present
 * and not "anonymous": every real ID token names its provider, so a token without one is refused rather
 * than guessed at. `admin` wants the custom claim admin: true, exactly as the admin callables do.
 */
export function policyRefusal(policy: CreatePolicy, claims: TokenClaims | undefined): string | undefined {
  switch (policy) {
    case "signed-in":
      return claims !== undefined ? undefined : "requires a signed-in user (CREATE_POLICY=signed-in)";
    case "non-anonymous": {
      const provider = claims?.firebase?.sign_in_provider;
      if (typeof provider === "string" && provider !== "anonymous") return undefined;
      const who = claims === undefined ? "no signed-in user" : provider === "anonymous" ? "an anonymous user" : "a token without a sign-in provider";
      return `requires a user signed in with a provider other than anonymous (CREATE_POLICY=non-anonymous); the caller is ${who}`;
    }
    case "admin":
      return claims?.admin === true ? undefined : "is limited to admins (CREATE_POLICY=admin): it requires the custom claim admin: true";
  }
}
