// A watched counter that does not exist (never created, deleted, or not created yet by its first call under
// the server's AUTO_CREATE), for both watchers (increments.ts, membership.ts): the error they tell, once per
// absence, and what a watch that expects the counter to create itself shows meanwhile (docs/app.md).
import { uncoveredDelta, type OwnIncrement } from "./coverage.js";
/**
 * A watched counter that does not exist (never created, or deleted), as the server says: told to a watch's
 * `onError` once each time the counter is found missing, while the watch goes on (a counter created later
 * shows at once). A watch with `{ autoCreated: true }` is never told: for a counter that AUTO_CREATE
 * creates on its first increment or like, missing is normal, and it shows 0 instead.
 */
export class CounterNotFoundError extends Error {
  readonly code = "not-found";
  constructor(readonly counterId: string) {
    super(
      `counters/${counterId} does not exist: create it (createCounter, or the admin entry in your own functions), or, for an id ` +
        "that AUTO_CREATE creates on its first increment or like, watch it with { autoCreated: true } to show 0 until then",
    );
    this.name = "CounterNotFoundError";
  }
}

/** What a watcher keeps to tell an absence once. */
export interface MissingTold {
  onError: ((error: Error) => void) | undefined;
  /** Told of the current absence already. */
  toldMissing: boolean;
}

/** Tells the watcher that the counter is missing, unless it was told of this absence already. */
export function tellMissing(watcher: MissingTold, counterId: string): void {
  if (watcher.toldMissing) return;
  watcher.toldMissing = true;
  watcher.onError?.(new CounterNotFoundError(counterId));
}

/**
 * What a watch with `autoCreated` shows while the counter does not exist: 0, plus every own increment the
 * client keeps (in flight, or answered and in no counter snapshot yet: the one whose call creates the
 * counter, before the counter's first snapshot arrives).
 */
export function autoCreatedValue(own: Iterable<OwnIncrement>): number {
  return uncoveredDelta(null, own) ?? 0;
}

/** A deletion was seen: own increments answered so far were applied to the counter that is gone. */
export function forgetAnswered(own: Map<string, OwnIncrement>): void {
  for (const [requestId, increment] of own) if (increment.writeTime !== null) own.delete(requestId);
}
