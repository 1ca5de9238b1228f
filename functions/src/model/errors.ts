// Errors the counter operations report to callers. They carry a callable error code but no Firebase
// Functions import, so store code stays usable from scripts; entry/oncall.ts turns them into HttpsError.

export type CounterErrorCode = "not-found" | "already-exists" | "aborted" | "failed-precondition" | "invalid-argument" | "permission-denied";

export class CounterError extends Error {
  constructor(
    readonly code: CounterErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "CounterError";
  }
}

/** gRPC status codes the Firestore server SDK reports as `error.code`. */
export const GRPC = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
} as const;

/** The gRPC status code of a Firestore error, or undefined for anything else. */
export function grpcCode(error: unknown): number | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = error.code;
    if (typeof code === "number") return code;
  }
  return undefined;
}

/**
 * True for a failure no retry of the same event can get past: Firestore refusing the request itself
 * (INVALID_ARGUMENT, OUT_OF_RANGE). Everything else — unavailable, deadlines, contention, permissions an
 * operator can still fix, errors without a code — is worth the platform's retries (the rollup is
 * idempotent), so only these make the trigger log and complete instead of throwing.
 */
export function isPermanentError(error: unknown): boolean {
  const code = grpcCode(error);
  return code === GRPC.INVALID_ARGUMENT || code === GRPC.OUT_OF_RANGE;
}
