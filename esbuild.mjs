// Builds every bundle the project ships, one esbuild context per entry.
// Usage: node esbuild.mjs [--watch] [--production]
// Type checking is separate (`npm run typecheck`): esbuild only strips types.
import * as esbuild from 'esbuild';
import { bundles } from './scripts/bundles.mjs';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

const options = bundles({ production });
const contexts = await Promise.all(options.map((o) => esbuild.context(o)));

if (watch) {
  await Promise.all(contexts.map((c) => c.watch()));
  console.log(`watching ${options.length} bundles`);
} else {
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
  // plumber-data is published with type declarations.
  if (existsSync('src/data/tsconfig.json')) {
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'src/data/tsconfig.json'], { stdio: 'inherit' });
  }
}
