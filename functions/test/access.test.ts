// CREATE_POLICY's decision (config/access.ts), table-driven on the claims a verified ID token carries.
import { policyRefusal, type TokenClaims } from "../src/config/access";
import type { CreatePolicy } from "../src/model/param-rules";

const password: TokenClaims = { firebase: { sign_in_provider: "password" } };
const google: TokenClaims = { firebase: { sign_in_provider: "google.com" } };
const anonymous: TokenClaims = { firebase: { sign_in_provider: "anonymous" } };
const admin: TokenClaims = { admin: true, firebase: { sign_in_provider: "password" } };
const anonymousAdmin: TokenClaims = { admin: true, firebase: { sign_in_provider: "anonymous" } };
const adminString: TokenClaims = { admin: "true", firebase: { sign_in_provider: "password" } };
const noProvider: TokenClaims = {};

describe("policyRefusal", () => {
  it.each<[CreatePolicy, string, TokenClaims | undefined, boolean]>([
    ["signed-in", "a password user", password, true],
    ["signed-in", "an anonymous user", anonymous, true],
    ["signed-in", "no user", undefined, false],
    ["non-anonymous", "a password user", password, true],
    ["non-anonymous", "a Google user", google, true],
    ["non-anonymous", "an admin", admin, true],
    ["non-anonymous", "an anonymous user", anonymous, false],
    ["non-anonymous", "an anonymous user with the admin claim", anonymousAdmin, false],
    ["non-anonymous", "a token without a provider", noProvider, false],
    ["non-anonymous", "no user", undefined, false],
    ["admin", "an admin", admin, true],
    ["admin", "an anonymous user with the admin claim", anonymousAdmin, true],
    ["admin", "a password user", password, false],
    ["admin", "a claim admin: \"true\" (a string, not true)", adminString, false],
    ["admin", "no user", undefined, false],
  ])("%s with %s: allowed %p", (policy, _who, claims, allowed) => {
    const refusal = policyRefusal(policy, claims);
    if (allowed) expect(refusal).toBeUndefined();
    else expect(refusal).toContain(`CREATE_POLICY=${policy}`);
  });

  it("says why an anonymous caller is refused under non-anonymous", () => {
    expect(policyRefusal("non-anonymous", anonymous)).toBe(
      "requires a user signed in with a provider other than anonymous (CREATE_POLICY=non-anonymous); the caller is an anonymous user",
    );
  });
});
