// Production-like delivery of recorded events, done by this process: a model of what Eventarc does with
// a Firestore trigger's events on Cloud Run (concurrent, unordered, at least once, retried on failure),
// with every number stated. The emulator cannot show it: it delivers one event at a time across every
// trigger (docs/benchmark.md, "Two ways events reach the rollup").
//
// - An event arrives when its write has committed. Each delivery starts a random delay after its
//   arrival (uniform in [0, maxDelayMs]): arrival order, perturbed.
// - A share of the events is delivered a second time, with a delay of its own (at least once).
// - Deliveries run on `instances` handlers (each its own copy of the function's module: its own memory),
//   at most `concurrency` at once per instance; a delivery goes to a random instance with room, and
//   waits for room when every instance is full (a fixed pool: Cloud Run would add instances instead).
// - A delivery that throws is delivered again after a backoff (RETRY: Eventarc's default policy).
// No Firebase import: the unit tests drive it with plain handlers.

export type Handler<E> = (event: E) => Promise<void>;

export interface DeliveryModel {
  /** Each delivery starts after a uniform random delay in [0, maxDelayMs] from its event's arrival. */
  maxDelayMs: number;
  /** Share of events (0–1) delivered a second time. */
  duplicateFraction: number;
  /** Deliveries in flight at once per instance (Cloud Run's concurrency). */
  concurrency: number;
}

export interface RetryPolicy {
  firstBackoffMs: number;
  maxBackoffMs: number;
  /** Deliveries of one event (first included) before the benchmark gives up on it and fails. */
  maxAttempts: number;
}

/**
 * Eventarc's default (its Pub/Sub subscription's): a failed delivery comes again after 10 s, the delay
 * doubling up to 600 s, for 24 h. The benchmark gives up after 5 attempts (150 s of backoff).
 */
export const EVENTARC_RETRY: RetryPolicy = { firstBackoffMs: 10_000, maxBackoffMs: 600_000, maxAttempts: 5 };

export interface DeliveryStats {
  /** Deliveries started: first deliveries, duplicates and retries. */
  deliveries: number;
  /** Events the model delivered a second time. */
  duplicates: number;
  /** Deliveries that threw and were delivered again after a backoff. */
  retries: number;
  /** The most deliveries in flight at once, over all instances. */
  maxInFlight: number;
  /**
   * Instance time billed: Σ over the instances of the time each had at least one delivery in flight
   * (Cloud Run bills an instance while it serves a request; concurrent requests share that time).
   */
  busyMs: number;
}

export interface Deliverer<E> {
  /** The event's write committed: schedules its delivery, and maybe a duplicate, by the model. */
  arrive(event: E): void;
  /** Schedules one delivery of `event` after `delayMs` (a workload with an order of its own). */
  deliver(event: E, delayMs: number): void;
  /** When the event's first delivery started (Date.now()), once it has. */
  firstDeliveryMs(event: E): number | undefined;
  /** Resolves once every scheduled delivery has succeeded; rejects if one failed `maxAttempts` times. */
  settled(): Promise<DeliveryStats>;
}

interface Ready<E> {
  event: E;
  attempt: number;
}

export function createDeliverer<E>(
  instances: readonly Handler<E>[],
  model: DeliveryModel,
  random: () => number,
  retry: RetryPolicy = EVENTARC_RETRY,
): Deliverer<E> {
  if (instances.length === 0 || model.concurrency < 1) throw new Error("delivery needs at least one instance and a concurrency of 1 or more");
  const inFlight = instances.map(() => 0);
  const stats: DeliveryStats = { deliveries: 0, duplicates: 0, retries: 0, maxInFlight: 0, busyMs: 0 };
  const busySince = instances.map(() => 0);
  const firstDelivery = new Map<E, number>();
  // A FIFO of due deliveries: timers push in due order, `head` pops without shifting the array.
  let ready: Ready<E>[] = [];
  let head = 0;
  let pending = 0;
  let failure: { error: unknown } | undefined;
  const onIdle: (() => void)[] = [];

  const schedule = (item: Ready<E>, delayMs: number) => {
    pending++;
    setTimeout(() => {
      ready.push(item);
      pump();
    }, delayMs);
  };

  const finish = () => {
    pending--;
    if (pending === 0) onIdle.splice(0).forEach((wake) => wake());
  };

  const pump = () => {
    while (head < ready.length) {
      const free = inFlight.flatMap((n, i) => (n < model.concurrency ? [i] : []));
      if (free.length === 0) return;
      const item = ready[head++]!;
      if (head > 1024 && head * 2 > ready.length) {
        ready = ready.slice(head);
        head = 0;
      }
      void run(free[Math.floor(random() * free.length)]!, item);
    }
  };

  const run = async (instance: number, item: Ready<E>) => {
    if (inFlight[instance]! === 0) busySince[instance] = performance.now();
    inFlight[instance]!++;
    stats.deliveries++;
    stats.maxInFlight = Math.max(stats.maxInFlight, inFlight.reduce((a, b) => a + b, 0));
    if (!firstDelivery.has(item.event)) firstDelivery.set(item.event, Date.now());
    try {
      await instances[instance]!(item.event);
    } catch (error) {
      if (item.attempt >= retry.maxAttempts) {
        failure ??= { error };
      } else {
        stats.retries++;
        const backoff = Math.min(retry.maxBackoffMs, retry.firstBackoffMs * 2 ** (item.attempt - 1));
        schedule({ event: item.event, attempt: item.attempt + 1 }, backoff);
      }
    } finally {
      inFlight[instance]!--;
      if (inFlight[instance]! === 0) stats.busyMs += performance.now() - busySince[instance]!;
      finish();
      pump();
    }
  };

  const delay = () => random() * model.maxDelayMs;
  return {
    arrive(event) {
      schedule({ event, attempt: 1 }, delay());
      if (random() < model.duplicateFraction) {
        stats.duplicates++;
        schedule({ event, attempt: 1 }, delay());
      }
    },
    deliver(event, delayMs) {
      schedule({ event, attempt: 1 }, delayMs);
    },
    firstDeliveryMs: (event) => firstDelivery.get(event),
    settled() {
      return new Promise((resolve, reject) => {
        const done = () => {
          if (failure === undefined) resolve({ ...stats });
          else reject(failure.error instanceof Error ? failure.error : new Error(String(failure.error)));
        };
        if (pending === 0) done();
        else onIdle.push(done);
      });
    },
  };
}
