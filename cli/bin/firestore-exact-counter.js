#!/usr/bin/env node
// The command's entry: lib/main.js is the CLI built by build.mjs (npm pack builds it; in the repository,
// npm run build does, and the npm scripts run the sources instead).
require("../lib/main.js");
