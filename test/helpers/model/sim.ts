// A simulated clock for the model check: virtual time in whole microseconds, timers in a queue, and a
// driver that runs them in order. Nothing here reads the real clock, so a schedule is a pure function of
// its seed. Between timers the driver yields to the event loop once (setImmediate), which lets every
// promise chain the previous timer woke run to its next await before the clock moves on.

/** A seeded source of numbers in [0, 1) (mulberry32): small, fast and the same on every machine. */
export type Rng = () => number;

export function rngOf(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [min, max]. */
export function between(rng: Rng, min: number, max: number): number {
  return min + Math.floor(rng() * (max - min + 1));
}

export function chance(rng: Rng, p: number): boolean {
  return rng() < p;
}

export function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)]!;
}

interface Timer {
  atUs: number;
  seq: number;
  fire: () => void;
}

export class Sim {
  private nowUs = 0;
  private seq = 0;
  private readonly queue: Timer[] = [];
  private steps = 0;

  constructor(startUs: number) {
    this.nowUs = startUs;
  }

  /** Virtual now, microseconds. */
  now(): number {
    return this.nowUs;
  }

  /** Resolves after `ms` of virtual time (0 = after everything already due now). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.at(this.nowUs + Math.max(0, Math.round(ms * 1000)), resolve));
  }

  /** When the next timer is due (microseconds); undefined when none is queued. */
  nextAtUs(): number | undefined {
    return this.queue[0]?.atUs;
  }

  /** Runs `fire` at virtual time `atUs` (never in the past). */
  at(atUs: number, fire: () => void): void {
    const timer = { atUs: Math.max(atUs, this.nowUs), seq: this.seq++, fire };
    // Binary heap keyed by (atUs, seq): equal times fire in the order they were set.
    const q = this.queue;
    q.push(timer);
    let i = q.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(q[i]!, q[parent]!)) break;
      [q[i], q[parent]] = [q[parent]!, q[i]!];
      i = parent;
    }
  }

  private pop(): Timer | undefined {
    const q = this.queue;
    if (q.length === 0) return undefined;
    const top = q[0]!;
    const last = q.pop()!;
    if (q.length > 0) {
      q[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < q.length && before(q[l]!, q[m]!)) m = l;
        if (r < q.length && before(q[r]!, q[m]!)) m = r;
        if (m === i) break;
        [q[i], q[m]] = [q[m]!, q[i]!];
        i = m;
      }
    }
    return top;
  }

  /** Fires timers in order until none is left; throws if the schedule runs away. */
  async run(maxSteps = 2_000_000): Promise<void> {
    await yieldOnce();
    for (;;) {
      const timer = this.pop();
      if (timer === undefined) {
        // Nothing queued: let any chain still running reach its next timer, then look again.
        await yieldOnce();
        if (this.queue.length === 0) return;
        continue;
      }
      this.nowUs = timer.atUs;
      timer.fire();
      await yieldOnce();
      if (++this.steps > maxSteps) throw new Error(`simulation ran over ${maxSteps} steps`);
    }
  }
}

function before(a: Timer, b: Timer): boolean {
  return a.atUs < b.atUs || (a.atUs === b.atUs && a.seq < b.seq);
}

function yieldOnce(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
