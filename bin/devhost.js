#!/usr/bin/env node
// `npx devhost`: runs the compiled devhost (dist/devhost/main.js). Build it first with `npm run build`.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const main = path.join(__dirname, "..", "dist", "devhost", "main.js");
if (!fs.existsSync(main)) {
  process.stderr.write(`devhost is not built (${main} is missing). Run \`npm run build\` first.\n`);
  process.exit(1);
}
require(main).main();
