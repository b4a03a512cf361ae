#!/usr/bin/env node
// `npx devhost`: runs the compiled devhost (dist/cli.js of this package). Build it first with `npm run build`.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const cli = path.join(__dirname, "..", "dist", "cli.js");
if (!fs.existsSync(cli)) {
  process.stderr.write(`devhost is not built (${cli} is missing). Run \`npm run build\` first.\n`);
  process.exit(1);
}
void require(cli).runCli();
