/**
 * Finding operators by the runner's op id across every chain of a pipeline's file and the files it
 * imports: what `plumber fix` edits when the pipeline is built somewhere the static graph shows no
 * exported chain (a class method in another module behind an exported factory).
 */
import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import { locateOps } from '../../../src/engine/locate';
import { staticRandomOps } from '../../../src/engine/randomness';

const ROOT = path.resolve(__dirname, '../../..');

describe('locating operators by id', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'plumber-locate-'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    mkdirSync(path.join(dir, 'lib'));
    writeFileSync(
      path.join(dir, 'lib', 'builder.ts'),
      [
        "import { range } from 'plumber-data';",
        'export function heavy(x: number): number { return x * 2; }',
        'export function jitter(x: number): number { return x + Math.random(); }',
        'export class Builder {',
        '  build() {',
        '    return range(10).map(heavy).map(jitter).batch(2);',
        '  }',
        '}',
      ].join('\n'),
    );
    writeFileSync(path.join(dir, 'pipeline.ts'), ["import { Builder } from './lib/builder';", 'export function makePipeline() {', '  return new Builder().build();', '}'].join('\n'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('finds a chain written in an imported class method, with the ids the runner gives it for the pipeline file', () => {
    const ws = new GraphWorkspace();
    const file = path.join(dir, 'pipeline.ts');
    assert.equal(ws.graphOf(file).pipelines.filter((p) => p.exported).length, 0, 'the static graph shows no exported chain');
    const located = locateOps(file, ws);
    assert.deepEqual(
      located.ops.map((o) => `${o.id} ${o.label}`),
      ['lib/builder.ts:6:12 range(10)', 'lib/builder.ts:6:22 map(heavy)', 'lib/builder.ts:6:33 map(jitter)', 'lib/builder.ts:6:45 batch(2)'],
    );
    // Inputs are rewritten the same way, so a fix can find the operator after another.
    assert.deepEqual(located.ops[1]!.inputs, ['lib/builder.ts:6:12']);
    assert.deepEqual(staticRandomOps(located), ['lib/builder.ts:6:33']);
  });
});
