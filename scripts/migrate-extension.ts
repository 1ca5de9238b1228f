// npm run migrate-extension: moves the firestore-counter extension's counters to exact counters; the
// command is scripts/lib/migrate-extension.ts (docs/from-the-extension.md).
import { exitWith } from "./lib/cli";
import { main } from "./lib/migrate-extension";

exitWith("migrate-extension", () => main(process.argv.slice(2)));
