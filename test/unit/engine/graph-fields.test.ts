/**
 * The graph says which fields a fn reads and which a map changes, from the source, and says
 * "unknown" (no list) where the source cannot tell; `keepPosition` is read as a knob.
 */
import * as assert from 'node:assert/strict';
import type { GraphOp } from '../../../src/engine/graph/types';
import { graphOf } from './virtualGraph';

describe('server graph: the fields a fn reads and writes', () => {
  const { graph } = graphOf(
    [
      "import { range } from 'plumber-data';",
      'interface Row { id: number; label: number; bytes: Uint8Array; image?: Uint8Array }',
      'function row(i: number): Row { return { id: i, label: i % 3, bytes: new Uint8Array(4) }; }',
      'export function decode(x: Row): Row { const image = x.bytes.slice(); return { ...x, image }; }',
      'export function isValid(x: Row): boolean { return x.label !== 0; }',
      'function inPlace(x: Row): Row { x.image = x.bytes; x["label"] += 1; return x; }',
      'function whole(x: Row): boolean { return JSON.stringify(x).length > 3; }',
      'function rebuilt(x: Row): Row { return { id: x.id, label: x.label, bytes: x.bytes }; }',
      'function fill(x: Row): void { x.image = x.bytes; }',
      'function viaHelper(x: Row): Row { fill(x); return x; }',
      'export const p = range(10)',
      '  .map(row)',
      '  .map(decode)',
      '  .filter(isValid)',
      '  .filter(({ id, label: l }) => id > l, { keepPosition: true })',
      '  .map(inPlace)',
      '  .filter(whole)',
      '  .map(rebuilt)',
      '  .map(viaHelper)',
      '  .filter((x, ctx) => ctx.index > 2);',
    ],
    'fields-virtual.ts',
  );
  const ops = graph.pipelines.find((p) => p.name === 'p')!.ops;
  const at = (label: string): GraphOp => ops.find((o) => o.label === label) ?? assert.fail(`no ${label} in ${ops.map((o) => o.label).join(', ')}`);

  it('reads a map that returns { ...x, image } as writing only image', () => {
    assert.deepEqual(at('map(decode)').fn?.fields, { reads: ['bytes'], writes: ['image'], usesContext: false });
  });

  it('reads the fields a filter reads by property and by destructuring', () => {
    assert.deepEqual(at('filter(isValid)').fn?.fields?.reads, ['label']);
    const destructured = ops.find((o) => o.kind === 'filter' && o.knobs.keepPosition?.state === 'literal')!;
    assert.deepEqual(destructured.fn?.fields?.reads, ['id', 'label']);
  });

  it('counts a mutated field as written, and a returned element as unchanged otherwise', () => {
    assert.deepEqual(at('map(inPlace)').fn?.fields, { reads: ['bytes', 'image', 'label'], writes: ['image', 'label'], usesContext: false });
  });

  it('leaves the reads unknown when the element is handed on whole, and the writes unknown when a new element is built', () => {
    assert.equal(at('filter(whole)').fn?.fields?.reads, undefined);
    assert.equal(at('map(rebuilt)').fn?.fields?.writes, undefined);
    // Handed to a helper that may change it: neither reads nor writes are known.
    assert.deepEqual(at('map(viaHelper)').fn?.fields, { usesContext: false });
    assert.equal(ops.at(-1)!.fn?.fields?.usesContext, true);
  });

  it('reads keepPosition: true as a literal knob', () => {
    const pinned = ops.filter((o) => o.knobs.keepPosition?.state === 'literal');
    assert.equal(pinned.length, 1);
    assert.equal(pinned[0].kind, 'filter');
  });
});
