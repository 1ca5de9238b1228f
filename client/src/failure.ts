// What the client's errors say: the call, the code and the reason. A refusal's reason is the server's
// message (the callable error's, e.g. "delta must be a non-zero integer from -1000 to 1000"), so an app
// that shows or logs `error.message` tells the user or the developer what was wrong, not only the code.
// Also the checks the client makes before it sends anything, with the server's wording, and the errors of
// increment() and setMember().

/** "<call> failed: <code>: <reason>", the reason omitted when there is none beyond the code. */
export function failureMessage(call: string, code: string, reason: string | undefined): string {
  const text = reason?.trim();
  return text === undefined || text === "" || text === code ? `${call} failed: ${code}` : `${call} failed: ${code}: ${text}`;
}

/**
 * The reason a rejection gives: its message, or undefined. A FunctionsError's message is the server's,
 * to which the JS SDK (12.x) appends the HTTP status ("… [400]"): that part is left out.
 */
export function reasonOf(cause: unknown): string | undefined {
  return cause instanceof Error ? cause.message.replace(/ \[\d{3}\]$/, "") : undefined;
}

/** counterId as the server accepts it (docs/api.md): 1-128 characters of [A-Za-z0-9_-]. */
const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Why `counterId` would be refused, in the server's words, or undefined when it is fine. */
export function counterIdProblem(counterId: unknown): string | undefined {
  if (typeof counterId !== "string") return "counterId must be a string";
  return ID_PATTERN.test(counterId) ? undefined : "counterId must be 1-128 characters of A-Z, a-z, 0-9, _ or -";
}

/** An increment that did not succeed. */
export class IncrementError extends Error {
  constructor(
    /** The callable error code without the "functions/" prefix ("not-found", …), or "unknown". */
    readonly code: string,
    readonly counterId: string,
    /** Send it again with `increment(counterId, delta, { requestId })` to settle a `maybeApplied` outcome. */
    readonly requestId: string,
    /**
     * True when an attempt may have applied the delta although no answer said so (a transient failure
     * came first, or attempts ran out). The counter's total then shows whether it did.
     */
    readonly maybeApplied: boolean,
    /** `cause`: the last rejection, whose message (the server's) the message repeats; `reason`: the client's own. */
    options?: { cause?: unknown; reason?: string },
  ) {
    super(failureMessage(`incrementCounter(${counterId})`, code, options?.reason ?? reasonOf(options?.cause)), { cause: options?.cause });
    this.name = "IncrementError";
  }
}

/** A setMember that did not succeed (the membership shown goes back to what it was). */
export class SetMemberError extends Error {
  constructor(
    /** The callable error code without the "functions/" prefix, or "unknown". */
    readonly code: string,
    readonly counterId: string,
    readonly member: boolean,
    /** True when an attempt may have changed the membership although no answer said so. */
    readonly maybeApplied: boolean,
    /** `cause`: the last rejection, whose message (the server's) the message repeats; `reason`: the client's own. */
    options?: { cause?: unknown; reason?: string },
  ) {
    super(failureMessage(`setMember(${counterId}, ${member})`, code, options?.reason ?? reasonOf(options?.cause)), { cause: options?.cause });
    this.name = "SetMemberError";
  }
}

/**
 * A like that needs a signed-in user and has none: `watchMember` of a user who is not the one signed in
 * to the client's Firebase app (signed out, or another user: Firestore's rules let a user read only their
 * own like), and the React hook `useLike`'s `like`, `unlike` and `toggle` while nobody is signed in. The
 * message names the call and says to sign in, instead of Firestore's "Missing or insufficient permissions".
 */
export class SignInRequiredError extends Error {
  /** As the callables answer a call without a signed-in user. */
  readonly code = "unauthenticated";
  constructor(
    readonly counterId: string,
    /** The call that needs the user, as the message names it: `watchMember(post-42-likes, <uid>)`. */
    call: string,
    /** What was refused, and why. */
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${call}: sign in first: ${reason}`, { cause: options?.cause });
    this.name = "SignInRequiredError";
  }
}
