// The packages as they will be once published, for the commands the docs write against the npm registry
// (`npx --yes @firestore-exact-counter/cli init`): a registry of the @firestore-exact-counter scope alone on a
// loopback port, serving each packed tarball (test/helpers/packed.ts) as its package's one version. npm
// asks it for that scope only (npm_config_@firestore-exact-counter:registry); every other package comes from
// where npm gets it otherwise. The commands then run as written, unchanged.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createServer } from "node:http";
import type { Tarballs } from "./packed";

export interface ScopedRegistry {
  /** The environment that sends npm to it for the scope. */
  env: NodeJS.ProcessEnv;
  /** Every path npm asked for. */
  requests: string[];
  close(): Promise<void>;
}

interface Published {
  manifest: Record<string, unknown>;
  tarball: Buffer;
}

/** The package.json inside a tarball npm pack wrote. */
function manifestOf(tarball: string): Record<string, unknown> {
  const read = spawnSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" });
  if (read.status !== 0) throw new Error(`tar could not read package/package.json from ${tarball}: ${read.stderr}`);
  return JSON.parse(read.stdout) as Record<string, unknown>;
}

/**
 * npx keeps what it installed per package spec in the npm cache's _npx folder and runs it again while its version
 * satisfies the spec: the packages under test change without a new version, so a machine that ran these
 * commands before would run its older build. Removes those installs of the scope (nothing else of the cache).
 */
function forgetNpxInstalls(scope: string): void {
  const cache = spawnSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).stdout.trim();
  const npx = join(cache, "_npx");
  if (cache === "" || !existsSync(npx)) return;
  for (const entry of readdirSync(npx)) {
    const manifest = join(npx, entry, "package.json");
    if (existsSync(manifest) && readFileSync(manifest, "utf8").includes(`"${scope}/`)) rmSync(join(npx, entry), { recursive: true, force: true });
  }
}

export async function scopedRegistry(tarballs: Tarballs): Promise<ScopedRegistry> {
  forgetNpxInstalls("@firestore-exact-counter");
  const packages = new Map<string, Published>();
  for (const path of Object.values(tarballs) as string[]) {
    const manifest = manifestOf(path);
    packages.set(manifest.name as string, { manifest, tarball: readFileSync(path) });
  }
  const requests: string[] = [];
  const server = createServer((request, response) => {
    const path = decodeURIComponent(request.url ?? "");
    requests.push(path);
    const base = `http://${request.headers.host ?? ""}`;
    const tarball = /^\/tarballs\/(.+)\.tgz$/.exec(path);
    const published = packages.get(tarball ? tarball[1]! : path.slice(1));
    if (published === undefined) {
      response.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
      return;
    }
    if (tarball) {
      response.writeHead(200, { "content-type": "application/octet-stream" }).end(published.tarball);
      return;
    }
    const { name, version } = published.manifest as { name: string; version: string };
    const dist = {
      tarball: `${base}/tarballs/${name}.tgz`,
      shasum: createHash("sha1").update(published.tarball).digest("hex"),
      integrity: `sha512-${createHash("sha512").update(published.tarball).digest("base64")}`,
    };
    const packument = { name, "dist-tags": { latest: version }, versions: { [version]: { ...published.manifest, dist } } };
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument));
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : 0);
    }),
  );
  return {
    env: { "npm_config_@firestore-exact-counter:registry": `http://127.0.0.1:${port}/` },
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
