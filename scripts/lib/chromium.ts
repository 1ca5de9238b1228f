// Headless Chromium for the browser tests: Debian's /usr/bin/chromium (apt-get install -y chromium)
// driven by playwright-core, which never downloads a browser. The flags keep Chromium off the network
// it would otherwise call at every start (this machine's closed network refuses it), and each launch
// gets a fresh profile that is deleted on close.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext } from "playwright-core";

/** The browser binary (CHROMIUM_PATH overrides). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const FLAGS = [
  "--no-sandbox", // root in a container
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Chromium> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM_PATH}: apt-get install -y chromium (docs/development.md), or set CHROMIUM_PATH.`);
  }
  const profile = mkdtempSync(join(tmpdir(), "counter-chromium-"));
  try {
    // Loaded here, not at import: the requirements check (scripts/lib/requirements.ts) reads CHROMIUM_PATH alone.
    const { chromium } = await import("playwright-core");
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
    return {
      context,
      close: async () => {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}
