// The client's one retry policy, for the calls that are safe to repeat (increment with its request id,
// setMember, which is idempotent): which codes are retried, the backoff between attempts, and what a
// caller learns when they stop (the outcome, or the code and whether an attempt may have applied).

/**
 * Codes retried with the same request id. `internal` is included: the JS SDK reports a network failure as
 * `internal`, and the server reports unexpected (often transient) errors so. `unknown` is also what a
 * rejection without a callable code (or an answer without a writeTime) counts as. A retry is safe
 * because the request id makes it idempotent. Everything else is a refusal: invalid-argument, not-found,
 * permission-denied, unauthenticated, failed-precondition, already-exists, out-of-range, unimplemented,
 * cancelled, data-loss.
 */
export const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  "unavailable",
  "deadline-exceeded",
  "resource-exhausted",
  "aborted",
  "internal",
  "unknown",
]);

export interface RetryPolicy {
  /** Attempts per call, the first included. */
  maxAttempts: number;
  /** Backoff before retry n (1-based) is up to `min(maxDelayMs, baseDelayMs * 2^(n-1))`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Waits between attempts. */
  sleep: (ms: number) => Promise<void>;
  /** Jitter source in [0, 1). */
  random: () => number;
}

/** The policy with the client's defaults (8 attempts, 250 ms doubling up to 8 s, setTimeout, Math.random). */
export function retryPolicy(options: Partial<RetryPolicy>): RetryPolicy {
  return {
    maxAttempts: options.maxAttempts ?? 8,
    baseDelayMs: options.baseDelayMs ?? 250,
    maxDelayMs: options.maxDelayMs ?? 8_000,
    sleep: options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    random: options.random ?? Math.random,
  };
}

/**
 * What a retried call ends with: its value and the calls made, or the last failure with its code.
 * `maybeApplied`: a transient failure happened, so an attempt may have reached the server.
 */
export type Retried<T> = { value: T; attempts: number } | { error: unknown; code: string; maybeApplied: boolean };

/**
 * Runs `attempt` (it throws to fail) until it returns, a failure is not transient, or attempts run out;
 * transient codes are retried with equal-jitter exponential backoff.
 */
export async function retrying<T>(attempt: () => Promise<T>, policy: RetryPolicy): Promise<Retried<T>> {
  let transientSeen = false;
  for (let n = 1; ; n++) {
    try {
      return { value: await attempt(), attempts: n };
    } catch (error) {
      const code = codeOf(error);
      const transient = TRANSIENT_CODES.has(code);
      if (transient && n < policy.maxAttempts) {
        transientSeen = true;
        const capMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (n - 1));
        await policy.sleep(capMs / 2 + (policy.random() * capMs) / 2);
        continue;
      }
      return { error, code, maybeApplied: transientSeen || transient };
    }
  }
}

/** The callable error code of a rejection ("functions/not-found" → "not-found"); "unknown" if none. */
function codeOf(error: unknown): string {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code.replace(/^functions\//, "") : "unknown";
}
