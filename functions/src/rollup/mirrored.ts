// The commit of a total that is mirrored (MIRRORS, model/mirror-rules.ts): the parent's update and, in the
// same atomic write, the total on every mirror target. The targets are the app's documents: any of them
// may appear, disappear or change at any moment, between any two steps of a commit. Over a MirrorPort (one
// atomic write, one consistent read), so the very same steps run over Firestore (firestore-store.ts, whose writes of the targets are counters/mirror-writes.ts) and over
// the model check's in-memory store (functions/test/model.test.ts).
//
// Why this is exact. A target is updated, never created, so a commit that names a missing target fails
// (NOT_FOUND) and writes nothing. The commit then reads the parent and the targets at one read time, and:
// - only the parent's absence means the counter is gone; a parent changed since the version the commit
//   was conditioned on means another writer won (the caller looks again; both outcomes are the rollup's
//   usual ones);
// - otherwise it commits again, updating the targets that exist and asserting in the same write that
//   the others do not (a delete conditioned on absence: it changes nothing when they are absent, and
//   fails when one appeared since the read). So a commit that lands wrote the total to every target that
//   existed at its commit time, and to no other document: none is left holding an older total by a
//   commit that skipped it. A target that appears after the commit gets the total from the next commit.
// - Targets that keep appearing and disappearing between the read and the commit make it try again, a
//   bounded number of times; then it throws, so the platform retries the event (the claim stays until a
//   commit lands: nothing that deferred to it is dropped).
import { GRPC, grpcCode } from "../model/errors";
import type { MirrorTarget } from "../model/mirror-rules";

/** Commits (the first one optimistic: targets normally exist) before a mirrored commit gives up. */
const MIRROR_COMMIT_ATTEMPTS = 4;

/** What a mirrored commit needs of a database. */
export interface MirrorPort<R> {
  /**
   * One atomic write: the parent's update, on condition that it is still at the version read; `total` on
   * each target of `present` (update: the document must exist); each document of `absent` asserted absent.
   * Throws the database's error and writes nothing when a condition fails: NOT_FOUND (the parent or a
   * `present` document is missing), FAILED_PRECONDITION (the parent changed), ALREADY_EXISTS or
   * FAILED_PRECONDITION (an `absent` document exists).
   */
  commit(present: readonly MirrorTarget[], absent: readonly string[]): Promise<R>;
  /** At one read time: the parent (absent, changed since the version read, or the same) and which of `paths` exist. */
  read(paths: readonly string[]): Promise<{ parent: "gone" | "changed" | "same"; exists: boolean[] }>;
}

/** How a mirrored commit ended, and what it cost beyond the parent's write. */
export type MirroredCommit<R> =
  | { kind: "committed"; result: R; targetWrites: number; reads: number }
  | { kind: "changed"; reads: number }
  | { kind: "gone"; reads: number };

/**
 * Commits the total onto the parent and every target of `targets` that exists, through `port`. `onAbsent`
 * hears of each target found missing (a warning: the target document is the app's, never created here).
 */
export async function commitMirrored<R>(
  port: MirrorPort<R>,
  targets: readonly MirrorTarget[],
  onAbsent: (target: MirrorTarget) => void,
): Promise<MirroredCommit<R>> {
  const paths = [...new Set(targets.map((t) => t.path))];
  let present: readonly MirrorTarget[] = targets;
  let absent: string[] = [];
  let reads = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await port.commit(present, absent);
      return { kind: "committed", result, targetWrites: present.length + absent.length, reads };
    } catch (error) {
      const code = grpcCode(error);
      if (code !== GRPC.NOT_FOUND && code !== GRPC.FAILED_PRECONDITION && code !== GRPC.ALREADY_EXISTS) throw error;
      // Only the parent was written, or only the parent carried a version: the code says which of the
      // parent's conditions failed, and nothing needs reading.
      if (targets.length === 0 && code === GRPC.NOT_FOUND) return { kind: "gone", reads };
      if (absent.length === 0 && code === GRPC.FAILED_PRECONDITION) return { kind: "changed", reads };
      if (attempt >= MIRROR_COMMIT_ATTEMPTS) {
        throw new Error(`mirror targets of ${paths.join(", ")} kept appearing or disappearing during ${attempt} commits; retrying the event`);
      }
      const seen = await port.read(paths);
      reads += 1 + paths.length;
      if (seen.parent !== "same") return { kind: seen.parent, reads };
      const missing = new Set(paths.filter((_, i) => !seen.exists[i]));
      present = targets.filter((t) => !missing.has(t.path));
      absent = [...missing];
      for (const target of targets) if (missing.has(target.path)) onAbsent(target);
    }
  }
}
