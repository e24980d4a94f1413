/**
 * The runner leaves the user's typed-array code as fast as in the user's own `tsx` process: its own
 * bundle and the libraries it loads for itself are compiled past the TypeScript loader's hook,
 * whose WebAssembly lexer would otherwise detach a buffer in the runner's main thread and switch V8
 * to checking every typed-array access there (src/runner/unhooked.ts).
 */
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { runProfile } from '../../../src/runner/spawn';
import { requireUnhooked } from '../../../src/runner/unhooked';
import { FIXTURES } from './dialects-helpers';

type Loader = (m: unknown, filename: string) => void;
const extensions = (Module as unknown as { _extensions: Record<string, Loader> })._extensions;

/** V8's line for a thread whose typed-array accesses start checking for detached buffers. */
const DETACHING = /Invalidating protector cell ArrayBufferDetaching/g;

describe('runner: loading its own code past the TypeScript loader', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'plumber-unhooked-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loads a CommonJS file and the files it requires without the .js hook, caches them as require does, and puts the hook back', () => {
    writeFileSync(path.join(dir, 'dep.js'), 'module.exports = { n: 41 };\n');
    writeFileSync(path.join(dir, 'main.js'), "const dep = require('./dep');\nmodule.exports = { n: dep.n + 1 };\n");
    const hooked: string[] = [];
    const previous = extensions['.js']!;
    const spy: Loader = (m, filename) => {
      hooked.push(path.basename(filename));
      previous(m, filename);
    };
    extensions['.js'] = spy;
    try {
      const main = path.join(dir, 'main.js');
      const loaded = requireUnhooked(main) as { n: number };
      assert.equal(loaded.n, 42);
      assert.deepEqual(hooked, [], 'a file went through the .js hook');
      assert.equal(extensions['.js'], spy, 'the hook was not put back');
      // The same module to a later require, which does not load it again.
      assert.equal(createRequire(main)(main), loaded);
      assert.deepEqual(hooked, []);
      // A file it did not load goes through the hook as before.
      writeFileSync(path.join(dir, 'other.js'), 'module.exports = 1;\n');
      createRequire(main)('./other');
      assert.deepEqual(hooked, ['other.js']);
    } finally {
      extensions['.js'] = previous;
    }
  });

  it('puts the hook back when the file throws, and does not keep the failed module', () => {
    const bad = path.join(dir, 'bad.js');
    writeFileSync(bad, "throw new Error('broken on purpose');\n");
    const before = extensions['.js'];
    assert.throws(() => requireUnhooked(bad), /broken on purpose/);
    assert.equal(extensions['.js'], before);
    writeFileSync(bad, 'module.exports = 7;\n');
    assert.equal(requireUnhooked(bad), 7);
  });

  it('makes no thread of the run check typed-array accesses that the same pipeline under tsx alone does not', async () => {
    const fixture = path.join(FIXTURES, 'asyncgen.ts');
    // The user's own process: tsx, the pipeline's module, a few elements.
    const own = path.join(dir, 'own.mjs');
    writeFileSync(own, `const m = await import(${JSON.stringify(pathToFileURL(fixture).href)});\nlet k = 0;\nfor await (const x of m.chain()) if (++k === 20) break;\n`);
    const tsx = pathToFileURL(require.resolve('tsx')).href;
    const alone = await promisify(execFile)(process.execPath, ['--import', tsx, '--trace-protector-invalidation', own], { cwd: dir });
    const expected = alone.stdout.match(DETACHING)?.length ?? 0;
    // The runner on the same pipeline, with its probes (which start worker pools) on.
    let printed = '';
    const p = await runProfile({
      file: fixture,
      exportName: 'chain',
      seconds: 0.4,
      warmupSeconds: 0.1,
      nodeArgs: ['--trace-protector-invalidation'],
      onOutput: (_stream, text) => {
        printed += text;
      },
    });
    assert.equal(p.error, undefined, p.error?.message);
    assert.ok(p.run.elements > 0);
    const seen = printed.match(DETACHING)?.length ?? 0;
    assert.ok(seen <= expected, `the runner's threads switched ${seen} time(s), the pipeline alone under tsx ${expected}:\n${printed.slice(-2000)}`);
  });
});
