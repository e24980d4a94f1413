/**
 * The arguments of a Node-streams `pipeline(…)`/`compose(…)` call reach the runner in every run's
 * request: the engine's graph locates them (`PipelineGraph.argSites`), and no stack can.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { diagnoseFile, type FrontDoorRunRequest } from '../../../src/engine/diagnose';
import type { FileGraph } from '../../../src/engine/graph/types';
import type { ArgSites } from '../../../src/shared/opId';
import type { Profile } from '../../../src/shared/profile';

const FILE = path.resolve(__dirname, '../../fixtures/runner-dialects/streams-compose.ts');

describe('the arguments of pipeline() and compose(), located by the engine', () => {
  it('are handed to the runner with every run of a file whose chains have them', async () => {
    const sites: ArgSites = { site: { file: FILE, line: 20, column: 10 }, args: ['20:18', '20:50', '20:63'] };
    const graph = {
      file: FILE,
      moduleKind: 'cjs',
      pipelines: [{ name: 'composed', exported: true, factory: true, file: FILE, ops: [], rootId: '20:63', partial: false, dialect: 'node-streams', argSites: [sites] }],
    } as unknown as FileGraph;
    const requests: FrontDoorRunRequest[] = [];
    await diagnoseFile({
      file: FILE,
      runs: { seconds: 1 },
      graphs: { graphOf: () => graph, importedFiles: () => [] },
      spawn: (request) => {
        requests.push(request);
        return Promise.resolve({ pipeline: { file: FILE, exportName: 'composed', rootId: '' }, ops: [], run: { seconds: 1, elements: 10 } } as unknown as Profile);
      },
      diagnose: async (input) => {
        const first = await input.run({}, 'profile');
        const last = await input.run({}, 'verify');
        return { first, last, profiles: [first, last], analysis: {}, plan: {} } as never;
      },
    });
    assert.equal(requests.length, 2);
    for (const r of requests) assert.deepEqual(r.argSites, [sites]);
  });
});
