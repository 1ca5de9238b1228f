// A tiny static file server on loopback for the example web app (examples/web): `npm start` runs one
// next to the emulators, the browser tests run their own. Deliberately not Firebase Hosting, so a
// `firebase deploy` can never upload the example or replace an app's site. Besides the files it serves
// /config.json: the project and emulator hosts the page should connect to, decided by whoever started it.
import { createReadStream, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { extname, join, normalize, sep } from "node:path";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
};

export interface RunningServer {
  /** http://127.0.0.1:<port>/ */
  url: string;
  close(): Promise<void>;
}

/** Serves `root` (index.html for "/") and `config` as /config.json on 127.0.0.1:`port` (0: any free port). */
export function serveStatic(root: string, config: unknown, port = 0): Promise<RunningServer> {
  const configBody = JSON.stringify(config);
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://localhost").pathname);
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405).end();
      return;
    }
    // The page and its config change with every build and start: never let the browser cache them.
    const headers = { "cache-control": "no-store" };
    if (path === "/config.json") {
      response.writeHead(200, { ...headers, "content-type": TYPES[".json"] }).end(configBody);
      return;
    }
    const file = normalize(join(root, path === "/" ? "index.html" : path));
    if (!file.startsWith(normalize(root) + sep) || !isFile(file)) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    response.writeHead(200, { ...headers, "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    createReadStream(file).pipe(response);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const bound = typeof address === "object" && address !== null ? address.port : port;
      resolve({
        url: `http://127.0.0.1:${bound}/`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
