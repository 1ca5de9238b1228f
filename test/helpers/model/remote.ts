// The World as one invocation sees it over the network: every call takes a random latency on the way
// there and back, and the invocation may crash at a chosen stage — after its sum, before or after its
// commit (a commit that made a promise included), or at any other call, before or after the call took effect. A crash is a
// thrown error, as an instance dying or a Firestore call failing would end the invocation; the platform
// (schedule.ts) then retries the event.
import type { CommitFields, CommitResult, ParentRead, RecountQuery, RollupStore } from "../../../functions/src/rollup/store";
import type { WindowsState } from "../../../functions/src/model/windows";
import { between, type Rng, type Sim } from "./sim";
import type { CommitSource } from "./world";

/** A store of the model (world.ts, board-world.ts): the rollup's, with a commit that may say who commits. */
export type ModelStore = Omit<RollupStore, "commit"> & {
  commit(counterId: string, parent: ParentRead, sum: { total: number; readUs: number }, fields: CommitFields, source?: CommitSource): Promise<CommitResult>;
};

/** Where an invocation crashes, if it does. */
export type Fault =
  | { at: "none" }
  | { at: "after-sum" }
  | { at: "before-commit" }
  | { at: "after-commit" }
  /** The n-th store call (0-based) fails, before or after it took effect. */
  | { at: "call"; n: number; applied: boolean };

export class SimulatedCrash extends Error {
  constructor(stage: string) {
    super(`simulated crash ${stage}`);
    this.name = "SimulatedCrash";
  }
}

export interface Network {
  sim: Sim;
  rng: Rng;
  /** Largest one-way latency of a store call, ms. */
  maxLatencyMs: number;
}

function hopOf(net: Network): () => Promise<void> {
  return () => net.sim.sleep(between(net.rng, 0, net.maxLatencyMs * 1000) / 1000);
}

/** `world` behind a network, for one invocation (`source`: a rollup's or the midnight commit's) that crashes as `fault` says. */
export function remoteStore(world: ModelStore, net: Network, fault: Fault, source: CommitSource = "rollup"): RollupStore {
  let calls = 0;
  const hop = hopOf(net);
  async function call<T>(stage: "sum" | "commit" | "other", op: () => Promise<T>): Promise<T> {
    const n = calls++;
    await hop();
    if (fault.at === "call" && fault.n === n && !fault.applied) throw new SimulatedCrash(`before call ${n}`);
    if (stage === "commit" && fault.at === "before-commit") throw new SimulatedCrash("before the commit");
    const result = await op();
    if (fault.at === "call" && fault.n === n && fault.applied) throw new SimulatedCrash(`after call ${n}`);
    if (stage === "sum" && fault.at === "after-sum") throw new SimulatedCrash("after the sum");
    if (stage === "commit" && fault.at === "after-commit") throw new SimulatedCrash("after the commit");
    await hop();
    return result;
  }
  return {
    readParent: (counterId: string) => call("other", () => world.readParent(counterId)),
    deleteClaim: (counterId: string, version: string) => call("other", () => world.deleteClaim(counterId, version)),
    sum: (counterId: string, numShards: number | null, days?: (readUs: number) => readonly string[]) => call("sum", () => world.sum(counterId, numShards, days)),
    count: (query: RecountQuery, limit: number | null) => call("sum", () => world.count(query, limit)),
    commit: (counterId: string, parent: ParentRead, sum: { total: number; readUs: number }, fields: CommitFields) =>
      call("commit", () => world.commit(counterId, parent, sum, fields, source)),
    moveWindows: (counterId: string, parent: ParentRead, moved: WindowsState) => call("commit", () => world.moveWindows(counterId, parent, moved)),
    staleClaims: (dueBeforeMs: number, limit: number, after?: object) => call("other", () => world.staleClaims(dueBeforeMs, limit, after)),
    promisesDue: (dueFromMs: number, dueBeforeMs: number, limit: number, after?: object) => call("other", () => world.promisesDue(dueFromMs, dueBeforeMs, limit, after)),
    readSweepMark: () => call("other", () => world.readSweepMark()),
    writeSweepMark: (dueBeforeMs: number) => call("other", () => world.writeSweepMark(dueBeforeMs)),
    // The midnight commit's query never fails here: a failed run only waits for the next.
    midnightCounters: async (atMs: number, limit: number, after?: object) => {
      await hop();
      const page = await world.midnightCounters(atMs, limit, after);
      await hop();
      return page;
    },
  };
}
