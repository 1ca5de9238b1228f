// What the page is told at run time (GET /config.json from the server that serves it): which project
// and which emulators to connect to, and the counter to show. No Firebase import, so the server side
// (scripts/lib/example-web.ts) shares the type.
export interface ExampleConfig {
  projectId: string;
  /** The functions' region (the REGION param). */
  region: string;
  /** host:port of each emulator. */
  emulators: { auth: string; firestore: string; functions: string };
  /** The counter the page shows unless the URL names one (?counter=<id>). */
  counterId: string;
}
