/**
 * The engine's side of the equivalence check, on real pipelines run by the real runner: the
 * reshaped sibling of a filter moved ahead of a map it does not depend on yields the same
 * elements; moved ahead of the map that writes the field it reads, it does not, and the reorder is
 * not offered. The sibling is always removed.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import { ReshapedFiles, reshapedSiblingOf } from '../../../src/engine/reshape/sibling';

const FILE = path.resolve(__dirname, '../../fixtures/pipelines/reorder-chains.ts');

describe('engine: a reorder is offered only when its reshaped sibling yields the same elements', function () {
  this.timeout(120_000);
  const ws = new GraphWorkspace();
  const ops = ws.graphOf(FILE).pipelines.flatMap((p) => p.ops);
  const id = (pipeline: string, label: string): string => {
    const p = ws.graphOf(FILE).pipelines.find((x) => x.name === pipeline)!;
    return (p.ops.find((o) => o.label === label) ?? assert.fail(`no ${label} in ${pipeline}: ${ops.map((o) => o.label).join(', ')}`)).id;
  };

  it('accepts a filter moved ahead of a map that does not write what it reads', async () => {
    const files = new ReshapedFiles(FILE);
    const change = { kind: 'reorder' as const, opId: id('independent', 'filter(isValid)'), before: id('independent', 'map(decode)'), reason: '' };
    const reshaped = await files.outcome(change);
    assert.ok(reshaped.ok);
    assert.match(reshaped.text, /export const independent = range\(300\)\n {2}\.map\(row\)\n {2}\.filter\(isValid\)\n {2}\.map\(decode\);/);
    assert.equal(await files.unoffered(change, 'independent', { elements: 80 }), undefined);
    assert.equal(existsSync(reshapedSiblingOf(FILE)), false);
  });

  it('refuses a filter moved ahead of the map that writes the field it reads, saying the output differs', async () => {
    const files = new ReshapedFiles(FILE);
    const change = { kind: 'reorder' as const, opId: id('dependent', 'filter(isBright)'), before: id('dependent', 'map(decode)'), reason: '' };
    const why = await files.unoffered(change, 'dependent', { elements: 50 });
    assert.match(why ?? '', /yields \d+ elements and the reshaped pipeline 0|differs|ended/);
    assert.equal(existsSync(reshapedSiblingOf(FILE)), false);
    // The original is untouched.
    assert.match(readFileSync(FILE, 'utf8'), /\.map\(decode\)\n {2}\.filter\(isBright\);/);
  });
});
