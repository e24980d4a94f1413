/**
 * plumber/profile hands the engine's diagnose what the CLI hands it, through the same front door
 * (src/engine/diagnoseFile.ts) — runner options per run, model options and randomness from the
 * source, passes and verification from the settings — shows
 * each step as progress, and keeps the final plan. The engine itself is tested in test/unit/engine;
 * here a scripted diagnose calls the run it is given, as the real one does.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { profilePipelines } from '../../../src/server/features/profile';
import type { RunProfileOptions } from '../../../src/runner/spawn';
import { Session } from '../../../src/server/session';
import type { DiagnoseInput, Diagnosis } from '../../../src/engine/diagnose';
import type { Verification } from '../../../src/shared/analysis';
import { DEFAULT_SETTINGS, type Settings } from '../../../src/shared/settings';
import { FIXTURES } from './helpers';
import { handMade } from './handmade';

const FILE = path.join(FIXTURES, 'project', 'pipelines.ts');
const URI = pathToFileURL(FILE).href;
const TEXT = readFileSync(FILE, 'utf8');

function settings(plan: Settings['plan'], cores = 3, maxInFlight = 12): Settings {
  // Runs of 4 s, not the default: the test shows the runs measure what the settings say.
  return { ...structuredClone(DEFAULT_SETTINGS), profile: { ...DEFAULT_SETTINGS.profile, seconds: 4 }, model: { ...DEFAULT_SETTINGS.model, cores, memoryBudgetMB: 0, maxInFlight }, plan };
}

describe('Profiling from the editor', () => {
  it('runs diagnose with the runner options, model options, passes and verification the settings give, and keeps its verified plan', async () => {
    const s = new Session(() => undefined);
    s.update(URI, 1, TEXT);
    const images = s.views(URI).find((v) => v.graph.name === 'images')!.graph;
    const hand = handMade(images, 'map(decode)', (id) => [{ kind: 'parallelism', opId: id('map(decode)'), from: 1, to: 2, reason: 'two cores are idle' }]);
    const verification: Verification = {
      verdict: 'gain',
      asWritten: { rate: 310, halfWidth: 9, windows: 8 },
      kept: { changes: [`parallelism:${hand.plan.changes[0]!.opId}`], measured: { rate: 527, halfWidth: 20, windows: 8 } },
      tried: [],
      speedup: 1.7,
      speedupHalfWidth: 0.1,
      dropped: [],
      summary: 'verified 1.7× ± 0.1',
      seconds: 3,
    };
    const runs: RunProfileOptions[] = [];
    const inputs: DiagnoseInput[] = [];
    const progress: string[] = [];
    const planOverrides = { [hand.plan.changes[0]!.opId]: { parallelism: 2 } };
    const result = await profilePipelines(
      { uri: URI, pipeline: 'images' },
      {
        trusted: true,
        settings: settings({ passes: 2, verify: true, budgetSeconds: 15 }),
        store: s.store,
        views: (u) => s.views(u),
        graphs: s.workspace,
        run: (opts) => {
          runs.push(opts);
          return Promise.resolve(hand.profile);
        },
        // Like the engine: a step, then its run, for as written, the re-plan and one verification run.
        diagnose: async (input): Promise<Diagnosis> => {
          inputs.push(input);
          input.onStep?.({ phase: 'profile', message: 'profiling as written', run: 1 });
          await input.run({}, 'profile');
          input.onStep?.({ phase: 'replan', message: 're-profiling with the plan applied (pass 2 of 2)', run: 2 });
          await input.run(planOverrides, 'replan', { warmupElements: 96 });
          input.onStep?.({ phase: 'verify', message: 'verifying: as written (2)', run: 3 });
          await input.run({}, 'verify');
          return { first: hand.profile, analysis: hand.analysis, plan: { ...hand.plan, verification }, last: hand.profile, profiles: [hand.profile, hand.profile, hand.profile] };
        },
        progress: (m) => progress.push(m),
      },
    );
    assert.deepEqual(result.outcomes, [{ pipeline: 'images', ok: true, rate: 310, predictedRate: hand.plan.predictedRate }]);
    const input = inputs[0]!;
    assert.equal(input.passes, 2);
    assert.equal(input.verify, true);
    // The settings' budget is the whole wait: reading the source for its randomness counts against it.
    assert.ok(input.budgetSeconds! <= 15 && input.budgetSeconds! > 14, `budget ${input.budgetSeconds}`);
    assert.equal(input.options?.cores, 3);
    assert.equal(input.options?.maxConcurrency, 12);
    // The static randomness of every chain of the file and of the files it imports: none is random here.
    assert.ok(images.ops.every((o) => !o.random));
    assert.equal(input.options?.randomOps, undefined);
    // Profile runs measure as long as the settings say; only the first probes (later passes inherit
    // what it measured), and verification runs are short and skip the probes.
    assert.deepEqual(
      runs.map((r) => [r.exportName, r.seconds, r.probes, r.overrides]),
      [
        ['images', 4, undefined, {}],
        ['images', 4, false, planOverrides],
        ['images', 1, false, {}],
      ],
    );
    // A pass warms up on the elements diagnose asks for, and every run takes the settings' limits.
    assert.deepEqual(
      runs.map((r) => [r.warmupMinElements, r.maxElements, r.startSeconds, r.timeoutSeconds, r.memoryMB, r.signal]),
      [
        [undefined, 100_000, 10, 60, 4096, undefined],
        [96, 100_000, 10, 60, 4096, undefined],
        [undefined, 100_000, 10, 60, 4096, undefined],
      ],
    );
    assert.deepEqual(progress, ['images: profiling as written (run 1 of 4)…', 'images: re-profiling with the plan applied (run 2 of 4)…', 'images: verifying the plan (run 3 of 4)…']);
    const kept = s.store.get(URI)!.profiles.get('images')!;
    assert.equal(kept.plan?.verification?.summary, 'verified 1.7× ± 0.1');
    assert.equal(kept.profile, hand.profile, 'the record keeps the run as written, whose numbers the lenses show');
  });

  it('counts only the profile passes when verification is off', async () => {
    const s = new Session(() => undefined);
    s.update(URI, 1, TEXT);
    const images = s.views(URI).find((v) => v.graph.name === 'images')!.graph;
    const hand = handMade(images, 'map(decode)', () => []);
    const progress: string[] = [];
    let verify: boolean | undefined;
    await profilePipelines(
      { uri: URI, pipeline: 'images' },
      {
        trusted: true,
        settings: settings({ passes: 1, verify: false, budgetSeconds: 15 }, 0, 0),
        store: s.store,
        views: (u) => s.views(u),
        graphs: s.workspace,
        run: () => Promise.resolve(hand.profile),
        diagnose: async (input): Promise<Diagnosis> => {
          verify = input.verify;
          assert.equal(input.options?.cores, undefined, 'cores 0: the model plans for the cores the run measured free');
          assert.equal(input.options?.maxConcurrency, undefined, 'maxInFlight 0: the model default');
          input.onStep?.({ phase: 'profile', message: 'profiling as written', run: 1 });
          await input.run({}, 'profile');
          return { first: hand.profile, analysis: hand.analysis, plan: hand.plan, last: hand.profile, profiles: [hand.profile] };
        },
        progress: (m) => progress.push(m),
      },
    );
    assert.equal(verify, false);
    assert.deepEqual(progress, ['images: profiling as written (run 1 of 1)…']);
  });
});
