// Errors the counter operations report to callers. They carry a callable error code but no Firebase
// Functions import, so store code stays usable from scripts; src/callable.ts turns them into HttpsError.

export type CounterErrorCode = "not-found" | "already-exists" | "aborted" | "failed-precondition" | "invalid-argument";

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
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
} as const;

/** The gRPC status code of a Firestore error, or undefined for anything else. */
export function grpcCode(error: unknown): number | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = error.code;
    if (typeof code === "number") return code;
  }
  return undefined;
}
