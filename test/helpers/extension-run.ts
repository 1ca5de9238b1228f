// Driving the extension migration's core over the emulator as migrate-extension and the fold trigger do
// (functions/src/extension/), and the rollup as rollupTotal does for a counter a fold wrote, with MIRRORS
// as given: shared by the extension tests of the wrapped tier.
import { randomUUID } from "node:crypto";
import type { Firestore } from "firebase-admin/firestore";
import { mirrorTargets, parseMirrorRules } from "../../functions/src/model/mirror-rules";
import { shardsRef } from "../../functions/src/model/paths";
import { migrate, type MigrationItem } from "../../functions/src/extension/migrate";
import { newCounterRuleOf, type NewCounterParams } from "../../functions/src/model/new-counter";
import { extensionRule } from "../../functions/src/model/extension-rules";
import { firestoreRollupStore } from "../../functions/src/rollup/firestore-store";
import { rollupShardWrite } from "../../functions/src/rollup/index";
import { shardStateOf } from "../../functions/src/model/shards";
import { microsCeil } from "../../functions/src/model/time";
import { rollupDeps } from "./rollup";

/** Every item of one migration of `document:field=counter` (the command's --document, --field, --counter). */
export async function migrateAll(
  db: Firestore,
  rule: { document: string; field: string; counter: string },
  options: { dryRun?: boolean; params?: NewCounterParams; concurrency?: number } = {},
): Promise<MigrationItem[]> {
  const items: MigrationItem[] = [];
  const run = migrate(db, extensionRule(rule.document, rule.field, rule.counter), {
    dryRun: options.dryRun ?? false,
    newCounter: newCounterRuleOf(options.params ?? {}),
    concurrency: options.concurrency ?? 4,
  });
  for await (const item of run) items.push(item);
  return items;
}

/** The fold reports of a migration's items, by document (fails the test on an item that is not a fold). */
export function reports(items: MigrationItem[]): Map<string, Extract<MigrationItem, { kind: "folded" }>["report"]> {
  const out = new Map<string, Extract<MigrationItem, { kind: "folded" }>["report"]>();
  for (const item of items) {
    if (item.kind !== "folded") throw new Error(`not folded: ${JSON.stringify(item)}`);
    out.set(item.report.document, item.report);
  }
  return out;
}

/** Runs the rollup for `counterId`'s latest shard write, as rollupTotal would, with MIRRORS = `mirrors`. */
export async function rollUp(db: Firestore, counterId: string, mirrors = ""): Promise<void> {
  const rules = parseMirrorRules("MIRRORS", mirrors);
  const store = firestoreRollupStore(db, { mirrors: (id) => mirrorTargets(rules, id) });
  const shards = (await shardsRef(db, counterId).get()).docs;
  const latest = shards.reduce((a, b) => (a.updateTime.toMillis() >= b.updateTime.toMillis() ? a : b));
  await rollupShardWrite(
    { eventId: randomUUID(), counterId, shardId: latest.id, writtenAtUs: microsCeil(latest.updateTime), before: undefined, after: shardStateOf(latest.data()) },
    rollupDeps({ store }),
  );
}
