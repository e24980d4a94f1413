/**
 * The graph and the runner meet on op ids: for each dialect, every operator the real runner
 * records when it profiles a pipeline is an operator of the graph the engine extracts from the same
 * file, with the same kind and the same inputs — so each stage's numbers land on its own line.
 * pipeline()/compose() arguments reach the runner through the graph's argSites, as the front door
 * hands them over.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { runProfile } from '../../../src/runner/spawn';
import type { PipelineGraph } from '../../../src/engine/graph/types';
import { open } from '../server/helpers';

const FIXTURES = path.resolve(__dirname, '../../fixtures/runner-dialects');

function graphOf(fixture: string, name: string): PipelineGraph {
  const p = open(path.join(FIXTURES, fixture)).graph.pipelines.find((x) => x.name === name);
  assert.ok(p, `${name} in ${fixture}`);
  return p;
}

async function joins(fixture: string, name: string): Promise<void> {
  const graph = graphOf(fixture, name);
  const profile = await runProfile({ file: path.join(FIXTURES, fixture), exportName: name, seconds: 0.4, warmupSeconds: 0.1, probes: false, ...(graph.argSites ? { argSites: graph.argSites } : {}) });
  assert.equal(profile.error, undefined, profile.error?.message);
  const byId = new Map(graph.ops.map((o) => [o.id, o]));
  assert.ok(profile.ops.length > 0);
  for (const op of profile.ops) {
    const g = byId.get(op.id);
    assert.ok(g, `the runner's ${op.kind}@${op.id} is in the graph (${graph.ops.map((o) => `${o.kind}@${o.id}`).join(', ')})`);
    assert.equal(g.kind, op.kind, `${op.id}`);
    assert.deepEqual(g.inputs, op.inputs, `inputs of ${op.kind}@${op.id}`);
    assert.deepEqual(g.levers, op.levers, `levers of ${op.kind}@${op.id}`);
  }
  assert.equal(profile.pipeline.rootId, graph.rootId);
}

describe('dialect graphs join the runner’s profiles by op id', function () {
  // Each case spawns the runner on a shared machine.
  this.timeout(120_000);

  it('for a tfjs-data chain', () => joins('tfjs.ts', 'finite'));
  it('for a Node-streams operator chain', () => joins('streams.ts', 'finite'));
  it('for compose() over a source, a Transform object and a generator function', () => joins('streams-compose.ts', 'composed'));
  it('for an async-generator chain', () => joins('asyncgen.ts', 'chain'));
});
