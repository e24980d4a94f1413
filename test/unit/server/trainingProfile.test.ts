/**
 * plumber/profile on a training script (issue 13): a file that builds pipelines and exports none is
 * run as a whole, as `plumber plan train.ts` runs it (no export name: the runner watches the
 * script's own loop), and the result is kept on the chain whose root the loop pulled. Here a
 * scripted diagnose calls the run it is given, as the real one does; test/protocol/training.test.ts
 * runs the real example through the built server and runner.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { profilePipelines } from '../../../src/server/features/profile';
import type { RunProfileOptions } from '../../../src/runner/spawn';
import { Session } from '../../../src/server/session';
import type { Diagnosis } from '../../../src/engine/diagnose';
import { DEFAULT_SETTINGS } from '../../../src/shared/settings';
import { handMade } from './handmade';

const FILE = path.resolve(__dirname, '../../../examples/train-digits/train.ts');
const URI = pathToFileURL(FILE).href;
const TEXT = readFileSync(FILE, 'utf8');

describe('Profiling a training script from the editor', () => {
  for (const asked of ['examples', 'batches', undefined]) {
    it(`runs the whole script and keeps the result on the chain its loop pulled (asked for ${asked ?? 'the whole file'})`, async () => {
      const s = new Session(() => undefined);
      s.update(URI, 1, TEXT);
      const views = s.views(URI);
      assert.ok(views.length === 2 && views.every((v) => !v.graph.exported), 'the example exports no pipeline');
      const pulled = views.find((v) => v.graph.name.startsWith('local:batches@'))!.graph;
      const hand = handMade(pulled, 'map(augment)', () => []);
      const runs: RunProfileOptions[] = [];
      const progress: string[] = [];
      const result = await profilePipelines(
        { uri: URI, ...(asked ? { pipeline: views.find((v) => v.graph.name.startsWith(`local:${asked}@`))!.graph.name } : {}) },
        {
          trusted: true,
          settings: { ...structuredClone(DEFAULT_SETTINGS), plan: { passes: 1, verify: false, budgetSeconds: 15 } },
          store: s.store,
          views: (u) => s.views(u),
          graphs: s.workspace,
          run: (opts) => {
            runs.push(opts);
            return Promise.resolve(hand.profile);
          },
          diagnose: async (input): Promise<Diagnosis> => {
            input.onStep?.({ phase: 'profile', message: 'profiling as written', run: 1 });
            const first = await input.run({}, 'profile');
            return { first, analysis: hand.analysis, plan: hand.plan, last: first, profiles: [first] };
          },
          progress: (m) => progress.push(m),
        },
      );
      assert.deepEqual(
        result.outcomes.map((o) => [o.pipeline, o.ok, o.error]),
        [[pulled.name, true, undefined]],
      );
      assert.equal(runs.length, 1);
      assert.equal(runs[0]!.exportName, undefined, 'the runner is given no export: it watches the script’s loop');
      assert.deepEqual(progress, ['the training loop of train.ts: profiling as written (run 1 of 1)…']);
      assert.deepEqual([...s.store.get(URI)!.profiles.keys()], [pulled.name]);
    });
  }
});
