// Shards that grow with the load (docs/growth.md): pure decisions, no Firebase import, so unit tests pin
// each case and the model check (functions/test/model.test.ts) drives them under random schedules.
//
// THE MEASURE. Every applied increment (and every setMember that changed a membership) adds 1 to its
// shard's `writes` in the same write that moves `count`, so it costs no extra document write. The rollup
// sums `writes` in the very aggregation query that sums `count`: at each commit it knows W, the number of
// writes applied up to the sum's read time R, across every instance that applied them. The parent keeps
// the last (R, W) in `rollup.load`; the next commit's (R', W') gives the rate over (R, R'] exactly.
//
// THE DECISION, at each commit, with capacity C = numShards x SHARD_WRITES_PER_SECOND:
// - an interval between two commits is hot when it applied more than C x its length;
// - a streak of hot intervals starts at the read time before the first one (kept with its W);
// - once a streak is HOT_FOR_MS long and its average rate is at least HEADROOM x C, the commit raises
//   numShards to what the rate needs with the same headroom (HEADROOM x rate / SHARD_WRITES_PER_SECOND,
//   rounded up), at most x4 a step, at most MAX_GROWN_SHARDS, and at most GROW_CHUNK new shards in one
//   commit. The headroom leaves the grown counter at 80 % of its capacity: the next interval is not hot
//   again by chance, and with shards picked at random the busiest shard stays near SHARD_WRITES_PER_SECOND;
// - the streak goes on across steps, so a counter far behind steps again at its next commit (about one
//   interval later): 1 -> 4 -> 16 -> 64 -> 256 -> 656 -> 1000 takes HOT_FOR_MS plus six intervals. A
//   counter too small applies fewer increments than are sent to it (contention), so the early part of its
//   streak understates the load, and the streak's average lags behind what arrives as it grows. So once a
//   streak has grown the counter, the rate it steps on and sizes for is the larger of the streak's average
//   and the last interval's rate (an interval of at least RATE_INTERVAL_MIN_MS: shorter ones are noise).
// - a non-hot interval, a gap (no commit for a while), or a measure that went backwards (a reshard that
//   dropped shards without folding, a hand edit) ends the streak. Nothing here ever lowers numShards.
//   For SPREAD_MS after a step, an interval is judged against the capacity before the step: increments
//   keep to the shards their instance knew until its cached numShards expires, so a counter whose
//   shards limit what it applies cannot show the new capacity's load yet, and its streak must not end
//   for that.
// Why a counter at capacity never grows: a streak of length T >= HOT_FOR_MS at rate <= C applied at most
// C x T + 1 writes (the +1: a write on the window's edge); HEADROOM x C x T exceeds that once C x T > 4,
// which HOT_FOR_MS = 10 s guarantees for any C >= 1.

/**
 * A streak of hot intervals: where it started (a read time, microseconds), the writes applied by then, and
 * its last step (the read time of the commit that grew the counter, and the numShards it grew from), null
 * before its first. A streak that has stepped may step again on its last interval's rate.
 */
export interface Heat {
  sinceUs: number;
  writes: number;
  step: { atUs: number; from: number } | null;
}

/** What the parent remembers of the load: the last measure (read time and writes), and the streak if hot. */
export interface Load {
  readUs: number;
  writes: number;
  hot: Heat | null;
}

/** The growth params (SHARD_WRITES_PER_SECOND, MAX_GROWN_SHARDS) and how long a streak must last. */
export interface GrowthSettings {
  shardWritesPerSecond: number;
  maxShards: number;
  /** A streak this long (ms) with enough writes grows the counter. */
  hotForMs: number;
}

/** How long the applied rate must stay above capacity before a counter grows (docs/growth.md). */
export const HOT_FOR_MS = 10_000;
/** A streak grows the counter only if its average rate is at least this times capacity. */
export const HEADROOM = 1.25;
/** At most this many times the shards in one step. */
export const MAX_STEP_FACTOR = 4;
/** At most this many new shards in one commit (with the parent and mirrors: well inside one write). */
export const GROW_CHUNK = 400;
/** The last interval's rate counts in the sizing only when the interval is at least this long. */
export const RATE_INTERVAL_MIN_MS = 500;
/**
 * How long increments may keep picking from the shards they knew before a step: the callable's shape
 * cache (SHAPE_CACHE_TTL_MS in model/shape-cache.ts; a unit test keeps the two equal).
 */
export const SPREAD_MS = 5_000;

/** What a commit writes about the load, and the shard count it raises the counter to (numShards when unchanged). */
export interface GrowthStep {
  load: Load;
  numShards: number;
  /** When it grows: the applied writes per second it sized the counter for. */
  rate?: number;
}

/**
 * The load a commit records and the numShards it commits, from what the parent recorded (`before`, null
 * when nothing was), the counter's numShards, and the new measure (`readUs`, `writes`).
 */
export function growthStep(before: Load | null, numShards: number, readUs: number, writes: number, settings: GrowthSettings): GrowthStep {
  const fresh = (hot: Heat | null): GrowthStep => ({ load: { readUs, writes, hot }, numShards });
  if (before === null || readUs <= before.readUs || writes < before.writes) return fresh(null);
  // The running streak, if any (one recorded before a measure that went backwards is not one: it must
  // lie before this interval).
  const running = before.hot !== null && before.hot.sinceUs <= before.readUs && before.hot.writes <= before.writes ? before.hot : null;
  const capacityPerSecond = numShards * settings.shardWritesPerSecond;
  const seconds = (readUs - before.readUs) / 1e6;
  const spreading = running?.step != null && before.readUs - running.step.atUs < SPREAD_MS * 1000;
  const judgedShards = spreading ? Math.min(numShards, running.step!.from) : numShards;
  if (writes - before.writes <= judgedShards * settings.shardWritesPerSecond * seconds) return fresh(null);
  // A hot interval: the streak starts where this interval did, unless one is already running.
  const hot = running ?? { sinceUs: before.readUs, writes: before.writes, step: null };
  const streakUs = readUs - hot.sinceUs;
  if (streakUs < settings.hotForMs * 1000) return fresh(hot);
  const average = (writes - hot.writes) / (streakUs / 1e6);
  // The first step rests on the streak's average alone: that is what keeps a counter at capacity from
  // ever growing (the argument above). A streak that has grown the counter is hot by then.
  const recent = hot.step !== null && seconds * 1000 >= RATE_INTERVAL_MIN_MS ? (writes - before.writes) / seconds : 0;
  const rate = Math.max(average, recent);
  if (rate < HEADROOM * capacityPerSecond) return fresh(hot);
  const needed = Math.ceil((HEADROOM * rate) / settings.shardWritesPerSecond);
  const target = Math.min(needed, numShards * MAX_STEP_FACTOR, numShards + GROW_CHUNK, settings.maxShards);
  if (target <= numShards) return fresh(hot);
  return { load: { readUs, writes, hot: { ...hot, step: { atUs: readUs, from: numShards } } }, numShards: target, rate };
}
