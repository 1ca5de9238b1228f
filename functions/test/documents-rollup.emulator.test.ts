// The document trigger rolls up its own shard write (functions/src/entry/documentCounters.ts): the total is
// exact as soon as the invocation that counted a comment resolves, with no rollupTotal at all. These tests
// run the wrapped trigger in-process against the Firestore emulator, on the wrapped tests' own project
// (test/helpers/wrapped.ts), where the functions emulator's rollupTotal never runs: a total that moved came
// from the trigger's invocation itself. Without its rollup every total here would stay at 0.
import { captureLogs, logger } from "../../test/helpers/logger";
import { db, shardSum, withParam } from "../../test/helpers/functions";
import { withConcurrency } from "../../test/helpers/client";
import { requireEmulators } from "../../test/helpers/emulators";
import { appCollection, documentTriggersOf, recordWrite, type DocumentWriteEvent } from "../../test/helpers/document-writes";
import { counterRef, shardsRef } from "../src/model/paths";
import { microsCeil, microsFloor } from "../src/model/time";

beforeAll(requireEmulators);
jest.setTimeout(120_000);

const POSTS = appCollection("rposts");
const RULES = `${POSTS}/{post}/comments/{comment}=${POSTS}-{post}-comments, ${POSTS}/{post}/comments/{c}[status==published]=${POSTS}-{post}-published`;
withParam("DOCUMENT_COUNTERS", RULES);
const deliver = documentTriggersOf(RULES);

const logs = captureLogs();

const comment = (post: string, id: string) => `${POSTS}/${post}/comments/${id}`;
const publish = (ref: FirebaseFirestore.DocumentReference) => ref.set({ text: "hi", status: "published" });
const remove = (ref: FirebaseFirestore.DocumentReference) => ref.delete();

/** The counter's total, and whether its sum's read time is at or after every write of its shards. */
async function rolledUp(counterId: string): Promise<{ total: unknown; coversShards: boolean }> {
  const [parent, shards] = await Promise.all([counterRef(db, counterId).get(), shardsRef(db, counterId).get()]);
  const readTime = parent.get("rollup.readTime") as FirebaseFirestore.Timestamp | null | undefined;
  const lastShardWriteUs = Math.max(...shards.docs.map((s) => microsCeil(s.updateTime)));
  return { total: parent.get("total"), coversShards: readTime != null && microsFloor(readTime) >= lastShardWriteUs };
}

describe("documentCounters rolls up its own shard write", () => {
  it("makes the total exact by the time the handler resolves, on an idle counter and on a busy one, without rollupTotal", async () => {
    const id = `${POSTS}-p1-comments`;
    // Idle: the first comment creates the counter; its leading edge commits at once.
    await deliver(await recordWrite(db, comment("p1", "c1"), publish));
    expect(await rolledUp(id)).toEqual({ total: 1, coversShards: true });
    expect(await rolledUp(`${POSTS}-p1-published`)).toEqual({ total: 1, coversShards: true });
    // Busy: the next comments come within the interval of that commit, so the rollup claims a slot and
    // waits for it, in the trigger's invocation; one is delivered twice.
    const events: DocumentWriteEvent[] = await Promise.all([
      ...["c2", "c3", "c4", "c5"].map((c) => recordWrite(db, comment("p1", c), publish)),
      recordWrite(db, comment("p1", "c1"), remove),
    ]);
    await withConcurrency(8, [...events, events[0]!].map((event) => () => deliver(event)));
    expect(await shardSum(id)).toBe(4);
    expect(await rolledUp(id)).toEqual({ total: 4, coversShards: true });
    expect(await rolledUp(`${POSTS}-p1-published`)).toEqual({ total: 4, coversShards: true });
    // Both paths ran in the trigger: a leading edge, and a claim's commit after its slot.
    const inline = logs.filter((l) => l.line.includes('"rollup ops"') && l.line.includes('"inline":true') && l.line.includes(`"counterId":"${id}"`));
    expect(inline.some((l) => l.line.includes('"outcome":"committed-lead"'))).toBe(true);
    expect(inline.some((l) => l.line.includes('"outcome":"committed"'))).toBe(true);
    expect(logs.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
  });

  it("counts the comment and succeeds when its rollup fails, with a warning naming the counter and the document", async () => {
    const id = `${POSTS}-p2-comments`;
    const debug = jest.mocked(logger.debug).getMockImplementation()!;
    // The rollup's last step (its ops line) throws: the invocation must still succeed.
    jest.mocked(logger.debug).mockImplementation((...args: unknown[]) => {
      if (args[0] === "rollup ops") throw new Error("the rollup failed here");
      debug(...args);
    });
    await expect(deliver(await recordWrite(db, comment("p2", "c1"), publish))).resolves.toBeUndefined();
    expect(await shardSum(id)).toBe(1);
    const warnings = logs.filter((l) => l.level === "warn" && l.line.includes("its rollup failed here and is left to rollupTotal"));
    expect(warnings).toHaveLength(2); // one per counter the comment moved
    expect(warnings.map((w) => w.line).join()).toContain(`"counterId":"${id}"`);
    expect(warnings[0]!.line).toContain(`"document":"${comment("p2", "c1")}"`);
    expect(warnings[0]!.line).toContain(`"error":"the rollup failed here"`);
  });
});
