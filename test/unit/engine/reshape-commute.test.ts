/**
 * A map moved above an adjacent map, on the real runner: the source says which fields each reads
 * and writes; the reshaped sibling of two maps that commute yields the same elements on a seeded
 * sample, one that shortens the text the other reads does not, and is not offered.
 */
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import { sourceFields } from '../../../src/engine/reshape/facts';
import { ReshapedFiles, reshapedSiblingOf } from '../../../src/engine/reshape/sibling';

const FILE = path.resolve(__dirname, '../../fixtures/pipelines/commute-maps.ts');

describe('engine: a map moved above a map it commutes with, on the real runner', function () {
  this.timeout(120_000);
  const ws = new GraphWorkspace();
  const op = (pipeline: string, label: string) => {
    const p = ws.graphOf(FILE).pipelines.find((x) => x.name === pipeline)!;
    return p.ops.find((o) => o.label === label) ?? assert.fail(`no ${label} in ${pipeline}: ${p.ops.map((o) => o.label).join(', ')}`);
  };

  it('the source gives each map its fields: tokenize and resize commute, tokenize and truncate do not', () => {
    const fields = sourceFields(FILE, ws);
    const f = (p: string, l: string) => fields[op(p, l).id];
    assert.deepEqual(f('commuting', 'map(tokenize)'), { reads: ['text'], writes: ['tokens'] });
    assert.deepEqual(f('commuting', 'map(resize)'), { reads: ['image'], writes: ['image'] });
    assert.deepEqual(f('dependentMaps', 'map(truncate)'), { reads: ['text'], writes: ['text'] });
  });

  it('accepts resize moved before tokenize; refuses truncate moved before tokenize, whose output differs', async () => {
    const files = new ReshapedFiles(FILE);
    const same = { kind: 'reorder' as const, opId: op('commuting', 'map(resize)').id, before: op('commuting', 'map(tokenize)').id, reason: '' };
    const written = await files.outcome(same);
    assert.ok(written.ok);
    assert.match(written.text, /export const commuting = range\(200\)\n {2}\.map\(makeDoc\)\n {2}\.map\(resize\)\n {2}\.map\(tokenize\);/);
    assert.equal(await files.unoffered(same, 'commuting', { elements: 50 }), undefined);
    const dependent = { kind: 'reorder' as const, opId: op('dependentMaps', 'map(truncate)').id, before: op('dependentMaps', 'map(tokenize)').id, reason: '' };
    assert.match((await files.unoffered(dependent, 'dependentMaps', { elements: 50 })) ?? '', /differs/);
    assert.equal(existsSync(reshapedSiblingOf(FILE)), false);
  });
});
