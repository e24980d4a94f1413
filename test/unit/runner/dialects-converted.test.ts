/**
 * A pipeline converted to plumber-data hands its consumers a tfjs Dataset (toTfDataset) or a lazy
 * async generator: the runner profiles the plumber-data operators inside as the pipeline's, joined to
 * the end the consumer pulls, so the editor's lenses land on them after a conversion.
 */
import { strict as assert } from 'node:assert';
import { idOf, op, profile } from './dialects-helpers';

const F = 'converted.ts';

describe('runner profiles of pipelines converted to plumber-data', function () {
  this.timeout(60_000);

  for (const [name, needle] of [
    ['asTf', 'toTfDataset(from(ids).map(lookup'],
    ['lazy', 'yield* from(ids).map(lookup'],
  ] as const) {
    it(`joins the plumber-data operators inside ${name} to the end its consumer pulls`, async () => {
      const p = await profile(F, name);
      const map = op(p, idOf(F, needle, 'map'));
      const source = op(p, idOf(F, needle, 'from'));
      assert.equal(map.dialect, undefined, 'the map is plumber-data’s');
      assert.deepEqual(map.inputs, [source.id]);
      const root = op(p, p.pipeline.rootId);
      assert.ok(root.inputs.includes(map.id), `the root ${root.kind}@${root.id} reads the map: ${JSON.stringify(root.inputs)}`);
      assert.ok(map.counters.produced >= p.run.elements, `the map produced what the run counted: ${map.counters.produced} for ${p.run.elements}`);
      assert.ok(map.counters.inFlightHighWater > 1, 'its calls ran in flight');
    });
  }
});
