// The benchmark's production-like delivery model (scripts/bench/delivery/deliverer.ts), pure: plain
// handlers instead of the rollup, so each promise of the model is checked exactly. Timing assertions are
// on order and counts, with wide margins, never on exact milliseconds.
import { createDeliverer, type Handler, type RetryPolicy } from "../bench/delivery/deliverer";
import { seededRandom, sleep } from "../bench/pace";

interface Event {
  id: number;
  arrivedMs: number;
}

/** Handlers that record every delivery's start and hold it for `holdMs`. */
function recordingInstances(count: number, holdMs: number) {
  const starts: { id: number; instance: number; atMs: number }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const perInstance = Array.from({ length: count }, () => ({ now: 0, max: 0 }));
  const handlers: Handler<Event>[] = perInstance.map((load, instance) => async (event) => {
    starts.push({ id: event.id, instance, atMs: Date.now() });
    inFlight++;
    load.now++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    load.max = Math.max(load.max, load.now);
    await sleep(holdMs);
    inFlight--;
    load.now--;
  });
  return { handlers, starts, perInstance, maxInFlight: () => maxInFlight };
}

const NO_RETRY_WAIT: RetryPolicy = { firstBackoffMs: 20, maxBackoffMs: 40, maxAttempts: 4 };

describe("production-like delivery", () => {
  it("delivers every event at least once and the stated share of them twice, nothing more", async () => {
    const { handlers, starts } = recordingInstances(2, 0);
    const deliverer = createDeliverer(handlers, { maxDelayMs: 5, duplicateFraction: 0.2, concurrency: 10 }, seededRandom(1));
    const events = Array.from({ length: 1000 }, (_, id) => ({ id, arrivedMs: Date.now() }));
    events.forEach((e) => deliverer.arrive(e));
    const stats = await deliverer.settled();

    const times = new Map<number, number>();
    for (const s of starts) times.set(s.id, (times.get(s.id) ?? 0) + 1);
    expect(times.size).toBe(1000);
    expect([...times.values()].every((n) => n === 1 || n === 2)).toBe(true);
    expect([...times.values()].filter((n) => n === 2)).toHaveLength(stats.duplicates);
    expect(stats.duplicates).toBeGreaterThan(140);
    expect(stats.duplicates).toBeLessThan(260);
    expect(stats.deliveries).toBe(1000 + stats.duplicates);
    expect(stats.retries).toBe(0);
  });

  it("runs at most `concurrency` deliveries per instance, uses every instance, and queues the rest", async () => {
    const { handlers, starts, perInstance, maxInFlight } = recordingInstances(3, 5);
    const deliverer = createDeliverer(handlers, { maxDelayMs: 0, duplicateFraction: 0, concurrency: 4 }, seededRandom(2));
    for (let id = 0; id < 200; id++) deliverer.arrive({ id, arrivedMs: Date.now() });
    const stats = await deliverer.settled();

    expect(starts).toHaveLength(200);
    expect(perInstance.every((load) => load.max <= 4)).toBe(true);
    expect(maxInFlight()).toBe(12);
    expect(stats.maxInFlight).toBe(12);
    for (let instance = 0; instance < 3; instance++) {
      expect(starts.filter((s) => s.instance === instance).length).toBeGreaterThan(20);
    }
  });

  it("bills an instance's time once, however many deliveries share it (busyMs), and every instance's own", async () => {
    const shared = recordingInstances(1, 50);
    const together = createDeliverer(shared.handlers, { maxDelayMs: 0, duplicateFraction: 0, concurrency: 10 }, seededRandom(6));
    for (let id = 0; id < 10; id++) together.arrive({ id, arrivedMs: Date.now() });
    const concurrent = await together.settled();
    // Ten deliveries of 50 ms at once on one instance: about 50 ms of instance time, not 500.
    expect(concurrent.busyMs).toBeGreaterThanOrEqual(45);
    expect(concurrent.busyMs).toBeLessThan(250);

    const queued = recordingInstances(2, 50);
    const oneAtATime = createDeliverer(queued.handlers, { maxDelayMs: 0, duplicateFraction: 0, concurrency: 1 }, seededRandom(7));
    for (let id = 0; id < 10; id++) oneAtATime.arrive({ id, arrivedMs: Date.now() });
    const sequential = await oneAtATime.settled();
    // One at a time per instance: each delivery's 50 ms is billed, whichever of the two instances ran it.
    expect(sequential.busyMs).toBeGreaterThanOrEqual(10 * 45);
  });

  it("starts no delivery before its event arrived, and keeps arrival order when there is no delay", async () => {
    const { handlers, starts } = recordingInstances(1, 0);
    const inOrder = createDeliverer(handlers, { maxDelayMs: 0, duplicateFraction: 0, concurrency: 1 }, seededRandom(3));
    for (let id = 0; id < 50; id++) {
      inOrder.arrive({ id, arrivedMs: Date.now() });
      if (id % 10 === 0) await sleep(2);
    }
    await inOrder.settled();
    expect(starts.map((s) => s.id)).toEqual(Array.from({ length: 50 }, (_, id) => id));
  });

  it("perturbs arrival order by the random delay, and delivers each event within its delay when there is room", async () => {
    const { handlers, starts } = recordingInstances(2, 0);
    const deliverer = createDeliverer(handlers, { maxDelayMs: 100, duplicateFraction: 0, concurrency: 50 }, seededRandom(4));
    const events: Event[] = [];
    for (let id = 0; id < 100; id++) {
      const event = { id, arrivedMs: Date.now() };
      events.push(event);
      deliverer.arrive(event);
      await sleep(1);
    }
    await deliverer.settled();

    const order = starts.map((s) => s.id);
    expect(order).not.toEqual([...order].sort((a, b) => a - b));
    for (const event of events) {
      const firstMs = deliverer.firstDeliveryMs(event)!;
      expect(firstMs).toBeGreaterThanOrEqual(event.arrivedMs);
      // 100 ms of delay at most, and a wide margin for timers on shared cores.
      expect(firstMs - event.arrivedMs).toBeLessThan(100 + 400);
    }
  });

  it("delivers a delivery that threw again after a growing backoff, and settles once it succeeds", async () => {
    const attempts: number[] = [];
    const flaky: Handler<Event> = async () => {
      attempts.push(Date.now());
      if (attempts.length <= 2) throw new Error("transient");
      await Promise.resolve();
    };
    const deliverer = createDeliverer([flaky], { maxDelayMs: 0, duplicateFraction: 0, concurrency: 1 }, seededRandom(5), NO_RETRY_WAIT);
    deliverer.arrive({ id: 1, arrivedMs: Date.now() });
    const stats = await deliverer.settled();

    expect(attempts).toHaveLength(3);
    expect(stats.retries).toBe(2);
    expect(stats.deliveries).toBe(3);
    // Backoffs of 20 then 40 ms (timers may fire a little early on some platforms: 5 ms of slack).
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(15);
    expect(attempts[2]! - attempts[1]!).toBeGreaterThanOrEqual(35);
  });

  it("fails settled() with the error of a delivery that threw on every attempt, after the others finished", async () => {
    const done: number[] = [];
    const handler: Handler<Event> = async (event) => {
      if (event.id === 0) throw new Error("always fails");
      await sleep(5);
      done.push(event.id);
    };
    const deliverer = createDeliverer([handler], { maxDelayMs: 0, duplicateFraction: 0, concurrency: 2 }, seededRandom(6), NO_RETRY_WAIT);
    for (let id = 0; id < 5; id++) deliverer.arrive({ id, arrivedMs: Date.now() });

    await expect(deliverer.settled()).rejects.toThrow("always fails");
    expect(done.sort()).toEqual([1, 2, 3, 4]);
  });
});
