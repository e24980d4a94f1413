/**
 * Order the user pinned (issue 54): a map whose source writes `deterministic: true` is never given
 * `deterministic: false`; the graph reads the pin, the model honours it.
 */
import * as assert from 'node:assert/strict';
import { orderPinnedOps } from '../../../src/engine/orderPins';
import { graphOf } from './virtualGraph';

describe('engine: order pins from the source', () => {
  it('pins a map that writes deterministic: true, and none that leaves it out, writes false or an expression', () => {
    const { graph } = graphOf(
      [
        "import { range } from 'plumber-data';",
        'const keep = true;',
        'async function fetchOne(x: number): Promise<number> {',
        '  return x;',
        '}',
        'export const pinned = range(10).map(fetchOne, { parallelism: 8, deterministic: true });',
        'export const free = range(10).map(fetchOne, { parallelism: 8 });',
        'export const off = range(10).map(fetchOne, { deterministic: false });',
        'export const computed = range(10).map(fetchOne, { deterministic: keep });',
      ],
      'order-pins.ts',
    );
    const byName = (name: string) => graph.pipelines.find((p) => p.name === name);
    const pins = (name: string) => {
      const p = byName(name);
      assert.ok(p, `no pipeline ${name}`);
      return orderPinnedOps(p);
    };
    assert.equal(pins('pinned').length, 1);
    assert.equal(pins('pinned')[0], byName('pinned')!.ops.find((o) => o.kind === 'map')!.id);
    assert.deepEqual(pins('free'), []);
    assert.deepEqual(pins('off'), []);
    assert.deepEqual(pins('computed'), []);
  });
});
