/**
 * The join between the two halves, on every dialect: the operators the runner profiles carry the
 * ids, kinds and inputs of the graph the engine reads from the same source, so every number lands
 * on the line it belongs to. The compose() pipeline runs with the argument sites the graph found.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import { FIXTURES, profile } from './dialects-helpers';

const CASES: Array<[fixture: string, exportName: string]> = [
  ['streams.ts', 'heavyThenLight'],
  ['streams.ts', 'lookups'],
  ['tfjs.ts', 'heavyThenLight'],
  ['asyncgen.ts', 'chain'],
  ['streams-compose.ts', 'composed'],
];

describe('runner profiles of dialect pipelines join the engine’s graph', function () {
  this.timeout(120_000);
  const ws = new GraphWorkspace();

  for (const [fixture, exportName] of CASES) {
    it(`gives ${fixture}'s ${exportName} the graph's operator ids, kinds and inputs`, async () => {
      const graph = ws.graphOf(path.join(FIXTURES, fixture)).pipelines.find((p) => p.name === exportName);
      assert.ok(graph, `the graph has no pipeline ${exportName}`);
      const p = await profile(fixture, exportName, graph.argSites ? { argSites: graph.argSites } : {});
      const asRun = (ops: Array<{ id: string; kind: string; inputs: string[] }>): string[] => ops.map((o) => `${o.kind}@${o.id}<${o.inputs.join(',')}`).sort();
      assert.deepEqual(asRun(p.ops), asRun(graph.ops));
      assert.equal(p.pipeline.rootId, graph.rootId);
      for (const o of p.ops) {
        assert.equal(o.dialect, graph.dialect);
        // What its library can change, as the graph (and the fixes that edit the source) see it.
        assert.deepEqual(o.levers, graph.ops.find((g) => g.id === o.id)?.levers, `${o.kind}@${o.id}`);
      }
    });
  }
});
