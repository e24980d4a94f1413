import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const EXAMPLES = ['images', 'digits', 'text', 'remote', 'audio'];
const SMOKE_OUT = join(ROOT, 'artifacts', 'bench-e2e', 'smoke');

interface Line {
  bench: string;
  pipeline: string;
  [figure: string]: unknown;
}

/** Runs the benchmark with smoke budgets to completion; resolves with its exit code and output. */
function runSmokeBench(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/e2e/index.ts', '--smoke', '--json'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

// `npm run test:bench`, not part of `npm test`: it runs every example about four times (as written,
// the heuristic, Plumber's plan, the oracle's grid), minutes on a loaded machine. The unit suite
// checks more cheaply that each example runs (test/unit/examples/run.test.ts).
describe('the end-to-end benchmark with smoke budgets', function () {
  // Every example is profiled, planned and run about four times with tiny element budgets. The
  // limit only stops a hang; nothing here depends on how fast the machine is.
  this.timeout(30 * 60_000);
  let result: Awaited<ReturnType<typeof runSmokeBench>>;
  let lines: Line[];

  before(async () => {
    // A table left by an earlier run must not pass for this one's.
    rmSync(SMOKE_OUT, { recursive: true, force: true });
    result = await runSmokeBench();
    lines = result.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
  });

  it('runs every example without an error', () => {
    assert.equal(result.code, 0, `the benchmark failed:\n${result.stderr.slice(-4000)}`);
    assert.deepEqual(
      lines.map((l) => l.pipeline),
      EXAMPLES,
    );
  });

  it('measures a positive rate for every configuration and a prediction for every plan', () => {
    for (const line of lines) {
      assert.equal(line.bench, 'e2e');
      assert.equal(line.load, 0, `${line.pipeline} ran under background load it was not asked for`);
      for (const figure of ['asWritten', 'heuristic', 'nodeHeuristic', 'auto', 'plumber', 'oracle', 'predicted', 'profileSeconds']) {
        const v = line[figure];
        assert.ok(typeof v === 'number' && Number.isFinite(v) && v > 0, `${line.pipeline}.${figure} is ${String(v)}`);
      }
    }
  });

  it('writes the markdown table and the SVG chart', () => {
    assert.ok(existsSync(join(SMOKE_OUT, 'chart.svg')));
    const table = readFileSync(join(SMOKE_OUT, 'results.md'), 'utf8');
    for (const name of EXAMPLES) assert.match(table, new RegExp(`\\| ${name} \\|`));
  });
});
