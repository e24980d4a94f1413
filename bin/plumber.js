#!/usr/bin/env node
// The `plumber` command: runs the bundled CLI. Build it first with `npm run build`.
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const cli = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
if (!fs.existsSync(cli)) {
  console.error('plumber: the CLI is not built yet. Run `npm run build` in ' + path.dirname(__dirname) + ' first.');
  process.exit(2);
}
require(cli);
