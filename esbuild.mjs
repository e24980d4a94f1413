// Builds every bundle the project ships, one esbuild context per entry.
// Usage: node esbuild.mjs [--watch] [--production]
// Type checking is separate (`npm run typecheck`): esbuild only strips types.
import * as esbuild from 'esbuild';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

const node = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
};

/** Each entry: where it starts, where it goes, and what it must not bundle. */
const entries = [
  // The pipeline library is its own package: its dependencies stay external.
  { in: 'src/data/index.ts', out: 'src/data/dist/index.js', external: ['piscina', 'tinyglobby', 'bullmq'] },
  { in: 'src/data/worker.ts', out: 'src/data/dist/worker.js', external: ['piscina', 'tinyglobby', 'bullmq'] },
  // `npx plumber-data worker` (src/data/cluster/bin.js loads it).
  { in: 'src/data/cluster/cli.ts', out: 'src/data/dist/cluster-cli.js', external: ['piscina', 'tinyglobby', 'bullmq'] },
  // The extension host provides `vscode`.
  { in: 'src/client/extension.ts', out: 'dist/client/extension.js', external: ['vscode'] },
  // vscode-languageclient (~400 KB) in its own bundle, loaded after activation returns.
  { in: 'src/client/lsp.ts', out: 'dist/client/languageClient.js', external: ['vscode'] },
  // The server bundles ts-morph so the VSIX needs no node_modules.
  { in: 'src/server/server.ts', out: 'dist/server/server.js', external: [] },
  // The runner must not bundle plumber-data: the user's pipeline brings its own copy,
  // and the two meet through global symbols (see src/shared/trace.ts).
  { in: 'src/runner/main.ts', out: 'dist/runner/main.js', external: ['plumber-data', 'tsx', 'tsx/*', 'esbuild'] },
  { in: 'src/cli/main.ts', out: 'dist/cli/main.js', external: ['plumber-data', 'tsx', 'tsx/*', 'esbuild'] },
  // The report webview runs in a browser.
  { in: 'media/report/main.ts', out: 'dist/media/report.js', browser: true },
].filter((e) => existsSync(e.in));

const contexts = await Promise.all(
  entries.map((e) =>
    esbuild.context(
      e.browser
        ? { ...node, platform: 'browser', format: 'iife', target: 'es2022', entryPoints: [e.in], outfile: e.out }
        : { ...node, entryPoints: [e.in], outfile: e.out, external: e.external },
    ),
  ),
);

if (watch) {
  await Promise.all(contexts.map((c) => c.watch()));
  console.log(`watching ${entries.length} bundles`);
} else {
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
  // plumber-data is published with type declarations.
  if (existsSync('src/data/tsconfig.json')) {
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'src/data/tsconfig.json'], { stdio: 'inherit' });
  }
}
