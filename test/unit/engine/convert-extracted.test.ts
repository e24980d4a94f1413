/**
 * The conversion on the graph the dialect extractors read (src/engine/graph/dialects): the same
 * rewritten text as on the chain the tests read themselves, for each dialect.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { convertInGraph, convertPipeline } from '../../../src/engine/convert';
import type { Dialect, PipelineGraph } from '../../../src/engine/graph/types';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import type { PlanChange } from '../../../src/shared/analysis';
import { convertOf, GENERATORS, opOf, readChain, STREAMS } from './convertGraph';

/** A tfjs-data chain as its users write it: the tf namespace of @tensorflow/tfjs. */
const TF_NAMESPACE = `import * as tf from '@tensorflow/tfjs';

export function decode(x: number): number {
  return x * 2;
}

export const ds = tf.data
  .array([1, 2, 3, 4])
  .map(decode)
  .batch(2);
`;

interface Case {
  text: string;
  name: string;
  dialect: Dialect;
  then(p: PipelineGraph): PlanChange[];
}

const CASES: Case[] = [
  { text: TF_NAMESPACE, name: 'ds', dialect: 'tfjs-data', then: (p) => [{ kind: 'placement', opId: opOf(p, 'map(decode'), to: 'worker', parallelism: 2, reason: 'r' }] },
  { text: STREAMS, name: 'items', dialect: 'node-streams', then: (p) => [{ kind: 'parallelism', opId: opOf(p, 'map(lookup'), from: 1, to: 4, reason: 'r' }] },
  { text: GENERATORS, name: 'rows', dialect: 'async-generator', then: (p) => [{ kind: 'placement', opId: opOf(p, 'scored'), to: 'worker', parallelism: 2, reason: 'r' }] },
];

describe('convert to plumber-data on the extracted graph', () => {
  for (const c of CASES) {
    it(`rewrites an extracted ${c.dialect} chain as the tests' own reading of it does`, () => {
      const file = path.resolve(__dirname, `../../fixtures/convert-${c.dialect}.ts`);
      const ws = new GraphWorkspace();
      ws.setText(file, c.text);
      const graph = ws.graphOf(file);
      const extracted = graph.pipelines.find((p) => p.name === c.name);
      assert.ok(extracted, `the extractor found no ${c.name}`);
      assert.equal(extracted.dialect, c.dialect);
      const own = readChain(file, c.text, c.name, c.dialect);
      const expected = convertPipeline({ pipeline: own, change: convertOf(own, c.dialect, c.then(own)), text: c.text, moduleKind: graph.moduleKind });
      assert.ok(expected.ok, expected.ok ? '' : expected.reason);
      // The plan names operators by the ids the runner and the extractor share.
      const out = convertInGraph(graph, c.text, convertOf(own, c.dialect, c.then(own)));
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.equal(out.text, expected.text);
    });
  }
});
