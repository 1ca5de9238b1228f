// Workload 6: likes on unique counters (docs/unique-counters.md). Our rollup only (the naive trigger has
// no members), under the given delivery: every call is the product's own setMember (the admin entry's, the
// same code as the callable's, on the shard it picks), two thirds of them likes by new users and one third unlikes of users who liked
// early on, round robin over the counters. Measured like workload 1 (its events are the shard writes
// setMember's batches make), plus what the calls themselves cost, counted on the calls the workload
// made: setMember's reads (parent, member document and membership record in one getAll, again after a
// lost race) and writes (the member document, the record and the shard in one batch, then the record's
// commit time). The run fails unless the totals settle at the number of member documents.
import type { App } from "firebase-admin/app";
import { Timestamp } from "firebase-admin/firestore";
import type { Counter } from "../counters";
import { dollars, int, ms } from "../format";
import { PRICES } from "../ops";
import { paced, sleep } from "../pace";
import { adminEntry } from "../product";
import type { PhaseResult } from "../recorder";
import type { BenchResults } from "../results";
import { step } from "./context";
import type { Delivery } from "./phase";
import { sizes } from "../options";
import { deliveryOf, wrappedOf, type Workload } from "./workload";

/** Shards of each counter (the product's default). */
const SHARDS = 10;
const MAX_IN_FLIGHT = 16;

export interface LikesResult {
  phase: PhaseResult;
  likes: number;
  unlikes: number;
  /** Document reads and writes setMember made for the calls, per call that changed a membership. */
  callReadsPerCall: number;
  callWritesPerCall: number;
  /** Σ members over the counters, counted once settled (must equal Σ totals). */
  members: number;
  totals: number;
}

const FLAGS = [
  { key: "likesCounters", flag: "--likes-counters", full: 10, quick: 3, min: 1, help: "workload 6: unique counters (10 shards each)" },
  { key: "likesRate", flag: "--likes-rate", full: 100, quick: 20, min: 1, help: "workload 6: setMember calls per second over them" },
  { key: "likesSeconds", flag: "--likes-seconds", full: 20, quick: 3, min: 1, help: "workload 6: duration" },
] as const;

export const likes: Workload<LikesResult> = {
  id: "likes",
  flags: FLAGS,
  stages: ["production-like"],
  run(ctx, on) {
    const { likesCounters: count, likesRate: rate, likesSeconds: seconds } = sizes(ctx.options, FLAGS);
    return step(`workload 6, likes on unique counters, production-like delivery: ${rate} setMember calls/s for ${seconds} s over ${count} counters, ours only`, () =>
      likesOn(deliveryOf(on), wrappedOf(on).app, count, rate, seconds),
    );
  },
  phases: (l) => [l.phase],
  // Its row is held to its own check (the totals settle at the member documents), as it always was.
  judged: "none",
  // The calls are setMember's, counted here.
  callables(l) {
    const calls = l.likes + l.unlikes;
    return new Map([[l.phase.opsPrefix, { calls, reads: l.callReadsPerCall * calls, writes: l.callWritesPerCall * calls }]]);
  },
  section: (l, results) => [likesLines(l, results)],
  failures: (l) => (l.members === l.totals ? [] : [`workload 6 settled at ${l.totals} likes in the totals for ${l.members} member documents`]),
};

/**
 * What a million setMember calls (likes and unlikes) cost: the calls themselves (reads and writes counted
 * on the calls made) plus the rollup side (the workload's row of the cost table).
 */
function likesLines(l: LikesResult, r: BenchResults): string {
  const rollup = r.costs.find((c) => c.workload === l.phase.workload && c.rollup === "ours");
  const callDollars = (l.callReadsPerCall * PRICES.read + l.callWritesPerCall * PRICES.write) * 1_000_000;
  const rollupDollars = rollup?.perMillion.dollars.total;
  return [
    `Workload 6, likes on unique counters (${int(l.likes)} likes and ${int(l.unlikes)} unlikes through setMember, ${l.phase.delivery} delivery): ` +
      `settled at ${int(l.totals)} in the totals for ${int(l.members)} member documents; lag p50 ${ms(l.phase.lagMs.p50)} ms, p99 ${ms(l.phase.lagMs.p99)} ms.`,
    `Per 1,000,000 setMember calls: the calls ${int(l.callReadsPerCall * 1_000_000)} reads + ${int(l.callWritesPerCall * 1_000_000)} writes = ${dollars(callDollars)}` +
      (rollupDollars === undefined ? "" : `, the rollup ${dollars(rollupDollars)} (row "${l.phase.workload}" of the cost table), ${dollars(callDollars + rollupDollars)} in all`) +
      ` (an incrementCounter call: 1 write = ${dollars(PRICES.write * 1_000_000)}).`,
  ].join("\n");
}

/** `app`: the production-like delivery's, whose Firestore holds the counters (delivery/wrapped.ts). */
async function likesOn(delivery: Delivery, app: App, count: number, rate: number, seconds: number): Promise<LikesResult> {
  const calls = rate * seconds;
  const counters = await delivery.createCounters("likes", "ours", count, SHARDS);
  const perCounter = Math.ceil(calls / count);
  // Likes first, then unlikes of the earliest likers: their likes committed long before (a later call
  // of the same counter), so each call changes a membership.
  const joins = Math.ceil((perCounter * 2) / 3);
  const made = new Map<string, number>(); // calls made per counter so far
  const cost = { reads: 0, writes: 0, likes: 0, unlikes: 0 };
  for (const counter of counters) {
    await counter.parent.update({ unique: true }); // created plain by the bench's helper; now a likes counter
    counter.write = async (c: Counter) => {
      const j = made.get(c.id) ?? 0;
      made.set(c.id, j + 1);
      const member = j < joins;
      const uid = `u${member ? j : j - joins}`;
      for (let attempt = 0; ; attempt++) {
        cost.reads += 3; // the parent, the member document and the record: one getAll per attempt of setMember
        const answer = await adminEntry().setMember(c.id, uid, member, { app });
        if (answer.changed) {
          cost.writes += 4;
          if (member) cost.likes++;
          else cost.unlikes++;
          const { seconds: s, nanoseconds } = answer.writeTime!;
          return { writeTime: new Timestamp(s, nanoseconds), delta: member ? 1 : -1 };
        }
        // An unlike that overtook its user's like (never expected with these spacings): wait for it.
        if (attempt >= 50) throw new Error(`setMember(${c.id}, ${uid}, ${member}) changed nothing`);
        await sleep(20);
      }
    };
  }
  const run = await delivery.run("6 likes", counters, async (increment) => ({
    writes: await paced(calls, rate, MAX_IN_FLIGHT, (i) => increment(counters[i % count]!)),
  }));
  let members = 0;
  let totals = 0;
  for (const counter of counters) {
    members += (await counter.parent.collection("members").count().get()).data().count;
    totals += (await counter.parent.get()).get("total") as number;
  }
  const changed = cost.likes + cost.unlikes;
  return {
    phase: run.result,
    likes: cost.likes,
    unlikes: cost.unlikes,
    callReadsPerCall: changed === 0 ? 0 : cost.reads / changed,
    callWritesPerCall: changed === 0 ? 0 : cost.writes / changed,
    members,
    totals,
  };
}
