import { strict as assert } from 'node:assert';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BIN, ROOT, run, type Ran } from './bin';

const WORKFLOW = path.join(ROOT, 'docs/ci/plumber.yml');
const PROJECT = path.join(ROOT, 'test/fixtures/ci-project');

/** The `run:` commands of the workflow's steps that call plumber, in order. */
function plumberCommands(workflow: string): string[] {
  return workflow
    .split('\n')
    .map((line) => /^\s*(?:- )?run: (.*)$/.exec(line)?.[1])
    .filter((cmd): cmd is string => cmd !== undefined && /\bnpx plumber\b/.test(cmd));
}

/** Runs a workflow step's command in bash, as GitHub Actions does, with `npx plumber` standing for this checkout's built CLI. */
function runStep(command: string, cwd: string): Promise<Ran> {
  return run('bash', ['-e', '-c', command.replaceAll('npx plumber', `node ${JSON.stringify(BIN)}`)], cwd);
}

describe("the README's CI workflow (docs/ci/plumber.yml)", function () {
  this.timeout(180_000);
  const workflow = readFileSync(WORKFLOW, 'utf8');
  let dir: string;

  before(async () => {
    // A project as CI checks it out: a git repository with its sources, its baseline to come, and its dependencies installed.
    dir = mkdtempSync(path.join(os.tmpdir(), 'plumber-ci-'));
    cpSync(PROJECT, dir, { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    writeFileSync(path.join(dir, '.gitignore'), 'node_modules/\n');
    const init = await run('git', ['init', '-q'], dir);
    assert.equal(init.code, 0, init.stderr);
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is the workflow the README shows, character for character', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    assert.ok(readme.includes(`\`\`\`yaml\n${workflow}\`\`\``), 'README.md\'s "Plumber in CI" section must hold docs/ci/plumber.yml verbatim in a ```yaml block');
  });

  it('runs every plumber command of the workflow on a fixture project: lint to SARIF, save a baseline, check against it', async () => {
    const commands = plumberCommands(workflow);
    assert.deepEqual(
      commands.map((c) => /npx plumber (\w+)/.exec(c)?.[1]),
      ['lint', 'check', 'check'],
      commands.join('\n'),
    );
    for (const command of commands) {
      const r = await runStep(command, dir);
      assert.equal(r.code, 0, `${command}\n${r.stdout}\n${r.stderr}`);
      if (/--baseline /.test(command)) assert.match(r.stdout, /^::(notice|warning) file=src\/pipeline\.ts,line=\d+,title=plumber check \(baseline\)::.*against the baseline's/m);
    }
    const sarif = JSON.parse(readFileSync(path.join(dir, 'plumber.sarif'), 'utf8')) as { version: string; runs: unknown[] };
    assert.equal(sarif.version, '2.1.0');
    assert.ok(existsSync(path.join(dir, 'plumber-baseline.json')));
    assert.equal((JSON.parse(readFileSync(path.join(dir, 'plumber-baseline.json'), 'utf8')) as { schema: string }).schema, 'plumber-baseline');
  });
});
