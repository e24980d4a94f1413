// What each bundle the project ships is built from, and how: esbuild's options per entry. Read by
// esbuild.mjs, which builds them, and by the test of how the library is shipped
// (test/unit/scripts/bundles.test.ts).
import { existsSync, readFileSync } from 'node:fs';

/** The pipeline library's dependencies, which its bundles leave external (one list: src/data/package.json). */
const LIBRARY_DEPENDENCIES = Object.keys(JSON.parse(readFileSync(new URL('../src/data/package.json', import.meta.url), 'utf8')).dependencies ?? {});

/** esbuild's options for every entry that exists, in development or `production` mode. */
export function bundles({ production = false } = {}) {
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
    // The pipeline library is its own package: its dependencies stay external, and it is never
    // minified. Node prints the source line of an uncaught error's first frame, and a TypeError
    // the library throws at its user (a worker map without `module`) printed 30 kB of one
    // minified line above the message.
    { in: 'src/data/index.ts', out: 'src/data/dist/index.js', external: LIBRARY_DEPENDENCIES, library: true },
    { in: 'src/data/worker.ts', out: 'src/data/dist/worker.js', external: LIBRARY_DEPENDENCIES, library: true },
    // The worker thread of a reader with `placement: 'worker'` (src/data/internal/readers/worker-host.ts starts it).
    { in: 'src/data/reader-worker.ts', out: 'src/data/dist/reader-worker.js', external: LIBRARY_DEPENDENCIES, library: true },
    // `npx plumber-data worker` (src/data/cluster/bin.js loads it).
    { in: 'src/data/cluster/cli.ts', out: 'src/data/dist/cluster-cli.js', external: LIBRARY_DEPENDENCIES, library: true },
    // The extension host provides `vscode`.
    { in: 'src/client/extension.ts', out: 'dist/client/extension.js', external: ['vscode'] },
    // vscode-languageclient (~400 KB) in its own bundle, loaded after activation returns.
    { in: 'src/client/lsp.ts', out: 'dist/client/languageClient.js', external: ['vscode'] },
    // The server bundles ts-morph so the VSIX needs no node_modules.
    { in: 'src/server/server.ts', out: 'dist/server/server.js', external: [] },
    // The runner must not bundle plumber-data: the user's pipeline brings its own copy,
    // and the two meet through global symbols (see src/shared/trace.ts).
    { in: 'src/runner/main.ts', out: 'dist/runner/main.js', external: ['plumber-data', 'tsx', 'tsx/*', 'esbuild'] },
    // The runner process's entry, which compiles main.js past the loader's hook (src/runner/start.ts says why); it must stay small.
    { in: 'src/runner/start.ts', out: 'dist/runner/start.js', external: [] },
    // The worker thread that times a fn as a worker pool would run it (src/runner/moves/workerTimes.ts
    // starts it from beside the runner's bundle).
    { in: 'src/runner/moves/timerWorker.ts', out: 'dist/runner/timer.js', external: ['plumber-data', 'tsx', 'tsx/*', 'esbuild'] },
    // The runner's watchdog thread, which ends the run when its parent dies (src/runner/child.ts starts it from beside the runner's bundle).
    { in: 'src/runner/watchdog.ts', out: 'dist/runner/watchdog.js', external: [] },
    { in: 'src/cli/main.ts', out: 'dist/cli/main.js', external: ['plumber-data', 'tsx', 'tsx/*', 'esbuild'] },
    // The report webview runs in a browser.
    { in: 'media/report/main.ts', out: 'dist/media/report.js', browser: true },
  ].filter((e) => existsSync(e.in));

  return entries.map((e) =>
    e.browser
      ? { ...node, platform: 'browser', format: 'iife', target: 'es2022', entryPoints: [e.in], outfile: e.out }
      : { ...node, entryPoints: [e.in], outfile: e.out, external: e.external, ...(e.library ? { minify: false } : {}) },
  );
}
