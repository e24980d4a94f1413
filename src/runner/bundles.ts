/**
 * Where the runner's bundles are: `dist/runner/` of the package root, searched upward from the
 * file that asks. From the bundles themselves that is their own folder; from sources (tests under
 * tsx) it is the built package's, so a worker entry whose TypeScript Node cannot start from sources
 * runs as built (`node esbuild.mjs`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The path of `dist/runner/<name>`, searched upward from this file; undefined when it is not built. */
export function findRunnerBundle(name: string): string | undefined {
  let dir = __dirname;
  for (;;) {
    const candidate = path.join(dir, 'dist', 'runner', name);
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
