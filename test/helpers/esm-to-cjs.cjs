// A jest transform for the few ES-module-only packages that the functions' dependencies require()
// (firebase-admin 14 → jwks-rsa 4 → jose 6). Node 22 loads them with require(esm) natively, so the
// functions run as they are in the emulator and in production; jest 29's module runtime does not, so in
// tests those files are rewritten to CommonJS with esbuild (already a devDependency), nothing else.
const { transformSync } = require("esbuild");

module.exports = {
  process(source, filename) {
    const { code, map } = transformSync(source, { format: "cjs", loader: "js", target: "node22", sourcefile: filename, sourcemap: "external" });
    return { code, map };
  },
};
