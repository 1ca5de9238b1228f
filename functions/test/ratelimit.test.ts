// The in-instance token bucket (model/ratelimit.ts) with an injected clock.
import { createLimiter } from "../src/model/ratelimit";

describe("createLimiter", () => {
  it("lets a caller make `burst` calls at once, then refuses until tokens come back at perMinute", () => {
    const limiter = createLimiter({ perMinute: 60, burst: 3 });
    expect([1, 2, 3, 4].map(() => limiter.take("u", 0))).toEqual([true, true, true, false]);
    expect(limiter.take("u", 999)).toBe(false); // one token per second: not yet
    expect(limiter.take("u", 1000)).toBe(true);
    expect(limiter.take("u", 1000)).toBe(false);
  });

  it("never refills beyond the burst, however long the caller was idle", () => {
    const limiter = createLimiter({ perMinute: 600, burst: 2 });
    limiter.take("u", 0);
    expect([1, 2, 3].map(() => limiter.take("u", 3_600_000))).toEqual([true, true, false]);
  });

  it("keeps one bucket per caller", () => {
    const limiter = createLimiter({ perMinute: 1, burst: 1 });
    expect(limiter.take("a", 0)).toBe(true);
    expect(limiter.take("a", 0)).toBe(false);
    expect(limiter.take("b", 0)).toBe(true);
  });

  it("holds a sustained caller to perMinute calls per minute", () => {
    const limiter = createLimiter({ perMinute: 120, burst: 10 });
    let allowed = 0;
    for (let ms = 0; ms < 60_000; ms += 10) if (limiter.take("bot", ms)) allowed++;
    expect(allowed).toBeGreaterThanOrEqual(120);
    expect(allowed).toBeLessThanOrEqual(130); // 120 refilled + the 10 of the first burst
  });

  it("is off with perMinute 0", () => {
    const limiter = createLimiter({ perMinute: 0, burst: 1 });
    expect(Array.from({ length: 100 }, () => limiter.take("u", 0)).every(Boolean)).toBe(true);
  });

  it("forgets the least recently seen caller beyond its bound, who comes back with a full bucket", () => {
    const limiter = createLimiter({ perMinute: 1, burst: 1 }, 2);
    limiter.take("a", 0);
    limiter.take("b", 0);
    limiter.take("a", 0); // a is now the most recently seen
    limiter.take("c", 0); // evicts b
    expect(limiter.take("a", 0)).toBe(false);
    expect(limiter.take("b", 0)).toBe(true);
  });
});
