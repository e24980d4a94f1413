#!/usr/bin/env node
'use strict';
// `npx plumber-data worker …`: registers tsx's hooks when tsx is installed (so --module may be a
// TypeScript file, loaded as the Plumber runner loads pipelines), then starts the worker CLI from
// the built package, or from its TypeScript source in a checkout.
const { existsSync } = require('node:fs');
const { createRequire } = require('node:module');
const path = require('node:path');

function register() {
  // The user's project first (its tsx), then the one next to this package.
  for (const from of [path.join(process.cwd(), 'package.json'), __filename]) {
    try {
      const req = createRequire(from);
      req(req.resolve('tsx/cjs/api')).register();
      req(req.resolve('tsx/esm/api')).register();
      return true;
    } catch {
      // Not installed there: try the next place.
    }
  }
  return false;
}

const hasTsx = register();
const built = path.join(__dirname, '..', 'dist', 'cluster-cli.js');
if (existsSync(built)) require(built);
else if (hasTsx) require(path.join(__dirname, 'cli.ts'));
else {
  process.stderr.write('plumber-data worker: the package is not built (no dist/cluster-cli.js) and tsx is not installed to run it from source.\n');
  process.exit(1);
}
