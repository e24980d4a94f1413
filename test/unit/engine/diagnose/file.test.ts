/**
 * The engine's front door (src/engine/diagnoseFile.ts): the run policy every surface's runs go
 * through, purpose by purpose and with each surface's settings as they were passed before it
 * existed; the static randomness of every chain of the file and of the files it imports; the
 * export later runs name; the budget as the whole wait. A scripted diagnose calls the run it is
 * given, as the real one does, and a scripted spawn records each request.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import {
  diagnoseFile,
  runRequestFor,
  sourceRandomOps,
  VERIFY_RUN_SECONDS,
  type DiagnoseInput,
  type Diagnosis,
  type FrontDoorRunRequest,
  type RunBudget,
  type RunPurpose,
  type RunSettings,
} from '../../../../src/engine/diagnose';
import { GraphWorkspace } from '../../../../src/engine/graph/workspace';
import type { Overrides, Profile } from '../../../../src/shared/profile';

const FILE = path.resolve(__dirname, '../../../fixtures/frontDoor/pipeline.ts');

/** A profile that names the export it ran (empty for a training script). */
function profileOf(exportName: string): Profile {
  return { pipeline: { file: FILE, exportName, rootId: '' }, ops: [], run: { seconds: 1, elements: 10 } } as unknown as Profile;
}

/** A diagnose that runs the passes and verification `script` lists, as the real one calls `run`. */
function scripted(script: Array<[Overrides, RunPurpose, RunBudget?]>, inputs: DiagnoseInput[] = []): (input: DiagnoseInput) => Promise<Diagnosis> {
  return async (input) => {
    inputs.push(input);
    const profiles: Profile[] = [];
    for (const [overrides, purpose, budget] of script) profiles.push(await input.run(overrides, purpose, budget));
    const first = profiles[0]!;
    return { first, analysis: {} as Diagnosis['analysis'], plan: {} as Diagnosis['plan'], last: profiles.at(-1)!, profiles };
  };
}

describe('The front door to diagnose', () => {
  describe('run policy', () => {
    // The editor's settings (the defaults, plumber.profile.seconds 4), as the server passes them.
    const editor: RunSettings = { seconds: 4, maxElements: 100_000, startSeconds: 10, timeoutSeconds: 60, memoryMB: 4096, nodePath: '', nodeArgs: [] };
    const editorFixed = { maxElements: 100_000, startSeconds: 10, timeoutSeconds: 60, memoryMB: 4096 };

    it('profiles as written for the settings’ window, with the probes that feed the model', () => {
      assert.deepEqual(runRequestFor(editor, 'profile'), { ...editorFixed, seconds: 4 });
    });

    it('re-profiles with the plan without probes, shorter when the budget asks and never longer than the settings', () => {
      assert.deepEqual(runRequestFor(editor, 'replan'), { ...editorFixed, seconds: 4, probes: false });
      assert.deepEqual(runRequestFor(editor, 'replan', { seconds: 2.5, warmupElements: 120 }), { ...editorFixed, seconds: 2.5, probes: false, warmupMinElements: 120 });
      assert.deepEqual(runRequestFor(editor, 'replan', { seconds: 9 }), { ...editorFixed, seconds: 4, probes: false });
    });

    it('verifies for the budget’s window, VERIFY_RUN_SECONDS when it names none, without probes, whatever the settings’ window', () => {
      assert.deepEqual(runRequestFor(editor, 'verify'), { ...editorFixed, seconds: VERIFY_RUN_SECONDS, probes: false });
      assert.deepEqual(runRequestFor(editor, 'verify', { seconds: 6.5, warmupElements: 40 }), { ...editorFixed, seconds: 6.5, probes: false, warmupMinElements: 40 });
    });

    it('passes the runner’s node and its flags only when set', () => {
      assert.deepEqual(runRequestFor({ ...editor, nodePath: '/opt/node', nodeArgs: ['--expose-gc'] }, 'profile'), { ...editorFixed, seconds: 4, nodePath: '/opt/node', nodeArgs: ['--expose-gc'] });
    });

    it('takes the command line’s flags as given, a training script’s included, and leaves the rest to the runner', () => {
      // `plumber plan --seconds 2 --warmup 0.2 --train`: flags not given stay the runner's defaults.
      const cli: RunSettings = { seconds: 2, maxElements: undefined, warmupSeconds: 0.2, startSeconds: undefined, timeoutSeconds: undefined, memoryMB: undefined, train: true };
      assert.deepEqual(runRequestFor(cli, 'profile'), { seconds: 2, warmupSeconds: 0.2, train: true });
      assert.deepEqual(runRequestFor(cli, 'verify', { seconds: 1.4 }), { seconds: 1.4, warmupSeconds: 0.2, train: true, probes: false });
    });

    it('gives a benchmark’s runs its own warm-up and time limit beside the policy’s windows', () => {
      // bench:model: 1.5 s windows, 0.5 s warm-up, 60 s limit; bench:e2e: the runner's 3 s, a 120 s limit.
      const model: RunSettings = { seconds: 1.5, warmupSeconds: 0.5, timeoutSeconds: 60 };
      assert.deepEqual(runRequestFor(model, 'replan', { seconds: 1.2, warmupElements: 64 }), { seconds: 1.2, warmupSeconds: 0.5, timeoutSeconds: 60, probes: false, warmupMinElements: 64 });
      assert.deepEqual(runRequestFor({ seconds: 3, timeoutSeconds: 120 }, 'verify', { seconds: 2 }), { seconds: 2, timeoutSeconds: 120, probes: false });
    });

    it('runs every run of a smoke test alike, with the probes, whatever its purpose and the budget', () => {
      const smoke: RunSettings = { seconds: 10, maxElements: 1, warmupSeconds: 0.05, startSeconds: 60, timeoutSeconds: 120, sameEveryRun: true };
      const alike = { seconds: 10, maxElements: 1, warmupSeconds: 0.05, startSeconds: 60, timeoutSeconds: 120 };
      for (const purpose of ['profile', 'replan', 'verify'] as const) assert.deepEqual(runRequestFor(smoke, purpose, { seconds: 1, warmupElements: 30 }), alike, purpose);
    });
  });

  describe('static randomness', () => {
    it('is the union over every chain of the file and of the files it imports, not only the exported pipeline’s', async () => {
      const ws = new GraphWorkspace();
      const numbers = ws.graphOf(FILE).pipelines.find((p) => p.name === 'numbers')!;
      assert.ok(
        numbers.ops.every((o) => !o.random),
        'the pipeline diagnosed is deterministic',
      );
      // A chain of the file behind an export of another name, and a chain of the file it imports.
      assert.deepEqual(await sourceRandomOps(FILE, ws), ['12:29', 'noise.ts:3:33']);
      assert.deepEqual(await sourceRandomOps(FILE), ['12:29', 'noise.ts:3:33'], 'read from the disk when no workspace is given');
    });

    it('yields none for a file the graph cannot read: the runner’s own checks still apply', async () => {
      assert.deepEqual(await sourceRandomOps(path.join(path.dirname(FILE), 'missing.ts')), []);
    });
  });

  describe('diagnoseFile', () => {
    it('hands diagnose the options with the source’s randomness and a budget less the time reading the source took', async () => {
      const inputs: DiagnoseInput[] = [];
      const ticks = [100, 100.25];
      const d = await diagnoseFile({
        file: FILE,
        exportName: 'numbers',
        runs: { seconds: 3 },
        options: { cores: 2 },
        passes: 2,
        verify: false,
        budgetSeconds: 15,
        clock: () => ticks.shift() ?? 101,
        spawn: () => Promise.resolve(profileOf('numbers')),
        diagnose: scripted([[{}, 'profile']], inputs),
      });
      const input = inputs[0]!;
      assert.deepEqual(input.options, { cores: 2, randomOps: ['12:29', 'noise.ts:3:33'] });
      assert.equal(input.budgetSeconds, 14.75);
      assert.equal(input.passes, 2);
      assert.equal(input.verify, false);
      assert.equal(d.sourceSeconds, 0.25);
    });

    it('asks the runner for each run as the policy says, names the export the first run found, and counts the passes', async () => {
      const requests: FrontDoorRunRequest[] = [];
      const signal = new AbortController().signal;
      const plan = { '10:35': { parallelism: 2 } };
      const d = await diagnoseFile({
        file: FILE,
        runs: { seconds: 3, timeoutSeconds: 120 },
        signal,
        spawn: (request) => {
          requests.push(request);
          return Promise.resolve(profileOf('numbers'));
        },
        diagnose: scripted([
          [{}, 'profile'],
          [plan, 'replan', { seconds: 2, warmupElements: 80 }],
          [{}, 'verify', { seconds: 1.5 }],
          [plan, 'verify'],
        ]),
      });
      assert.deepEqual(
        requests.map(({ signal: s, ...r }) => [s === signal, r]),
        [
          [true, { file: FILE, overrides: {}, seconds: 3, timeoutSeconds: 120 }],
          [true, { file: FILE, exportName: 'numbers', overrides: plan, seconds: 2, timeoutSeconds: 120, probes: false, warmupMinElements: 80 }],
          [true, { file: FILE, exportName: 'numbers', overrides: {}, seconds: 1.5, timeoutSeconds: 120, probes: false }],
          [true, { file: FILE, exportName: 'numbers', overrides: plan, seconds: VERIFY_RUN_SECONDS, timeoutSeconds: 120, probes: false }],
        ],
      );
      assert.equal(d.passes, 2);
    });

    it('goes on running a training script as a whole: its profile names no export', async () => {
      const requests: FrontDoorRunRequest[] = [];
      await diagnoseFile({
        file: FILE,
        runs: { seconds: 3 },
        spawn: (request) => {
          requests.push(request);
          return Promise.resolve(profileOf(''));
        },
        diagnose: scripted([
          [{}, 'profile'],
          [{}, 'replan'],
        ]),
      });
      assert.deepEqual(
        requests.map((r) => r.exportName),
        [undefined, undefined],
      );
    });
  });
});
