/**
 * A plan for another machine in the editor (issue 52, part 4): with `plumber.model.cores` other
 * than the cores the profile's machine gives, the plan the engine's front door keeps carries its
 * target, and the lens, the tree, the report and the hover label its figure "predicted for N
 * cores — verified here on M cores: …" or "— not verifiable here (this machine has M)". The
 * diagnose is scripted (the engine is tested in test/unit/engine); the target is computed by the
 * front door from the settings, as for a real run.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { codeLenses, resolveCodeLens } from '../../../src/server/features/codeLens';
import { hover } from '../../../src/server/features/hover';
import { pipelines } from '../../../src/server/features/pipelines';
import { profilePipelines } from '../../../src/server/features/profile';
import { report } from '../../../src/server/features/report';
import { Session } from '../../../src/server/session';
import { fixesWords } from '../../../src/client/views/format';
import type { Diagnosis } from '../../../src/engine/diagnose';
import type { Plan, Verification } from '../../../src/shared/analysis';
import { DEFAULT_SETTINGS, type Settings } from '../../../src/shared/settings';
import { FIXTURES } from './helpers';
import { handMade, type Hand } from './handmade';

const FILE = path.join(FIXTURES, 'project', 'pipelines.ts');
const URI = pathToFileURL(FILE).href;
const TEXT = readFileSync(FILE, 'utf8');

function settings(cores: number): Settings {
  return { ...structuredClone(DEFAULT_SETTINGS), model: { ...DEFAULT_SETTINGS.model, cores, memoryBudgetMB: 0, maxInFlight: 0 }, plan: { passes: 1, verify: true, budgetSeconds: 15 } };
}

const GAIN: Omit<Verification, 'kept'> = {
  verdict: 'gain',
  asWritten: { rate: 310, halfWidth: 9, windows: 8 },
  tried: [],
  speedup: 1.7,
  speedupHalfWidth: 0.1,
  dropped: [],
  summary: 'verified 1.7× ± 0.1',
  seconds: 3,
};

/**
 * Profiles `images` from the editor with `plumber.model.cores` = `cores`, the scripted diagnose
 * returning the hand-made plan verified; `workers`: map(decode) runs in worker threads as profiled
 * and the plan gives it that many (else the plan raises its parallelism on the main thread).
 */
async function profiledFor(cores: number, workers?: number): Promise<{ s: Session; plan: Plan }> {
  const s = new Session(() => undefined);
  s.update(URI, 1, TEXT);
  const images = s.views(URI).find((v) => v.graph.name === 'images')!.graph;
  const hand: Hand = handMade(images, 'map(decode)', (id) => [{ kind: 'parallelism', opId: id('map(decode)'), from: 1, to: workers ?? 2, reason: 'more cores are idle' }]);
  const decode = hand.plan.changes[0]!.opId;
  if (workers !== undefined) hand.profile = { ...hand.profile, ops: hand.profile.ops.map((o) => (o.id === decode ? { ...o, placement: 'worker' as const, knobs: { ...o.knobs, parallelism: 1 } } : o)) };
  const plan: Plan = { ...hand.plan, overrides: { [decode]: { parallelism: workers ?? 2 } }, verification: { ...GAIN, kept: { changes: [`parallelism:${decode}`], measured: { rate: 527, halfWidth: 20, windows: 8 } } } };
  await profilePipelines(
    { uri: URI, pipeline: 'images' },
    {
      trusted: true,
      settings: settings(cores),
      store: s.store,
      views: (u) => s.views(u),
      graphs: s.workspace,
      run: () => Promise.resolve(hand.profile),
      diagnose: async (input): Promise<Diagnosis> => {
        await input.run({}, 'profile');
        return { first: hand.profile, analysis: hand.analysis, plan, last: hand.profile, profiles: [hand.profile] };
      },
      progress: () => undefined,
    },
  );
  return { s, plan: s.store.get(URI)!.profiles.get('images')!.plan! };
}

function lensTitles(s: Session): string[] {
  const views = s.views(URI);
  return codeLenses(views, FILE, DEFAULT_SETTINGS.codeLens).map((l) => resolveCodeLens(l, views).command?.title ?? '');
}

describe('A plan for another machine, in the editor', () => {
  it('labels a plan for 8 cores whose threads fit here "verified here on 2 cores" in the lens, the tree and the report', async () => {
    const { s, plan } = await profiledFor(8);
    // The hand-made profile ran on 2 cores with no measurement of free ones: here is 2.
    assert.deepEqual(plan.target, { cores: 8, hereCores: 2, threads: 1, verifiable: true });
    const label = 'predicted for 8 cores — verified here on 2 cores: 1.7× ± 0.1';
    assert.ok(
      lensTitles(s).some((t) => t.includes(label)),
      JSON.stringify(lensTitles(s)),
    );
    const summary = pipelines(s.views(URI), FILE, []).find((p) => p.name === 'images')!;
    assert.deepEqual(summary.target, plan.target);
    assert.match(fixesWords(summary)!, /^fixes: est\. [\d.]+× predicted for 8 cores — verified here on 2 cores: 1\.7× ± 0\.1$/);
    const r = report(
      s.views(URI).find((v) => v.graph.name === 'images')!,
      FILE,
      [],
      [],
    );
    assert.ok(r.advice?.headline.endsWith(label), JSON.stringify(r.advice));
  });

  it('says "not verifiable here (this machine has 2)" when the plan runs more worker threads than there are cores here', async () => {
    const { s, plan } = await profiledFor(8, 6);
    assert.deepEqual(plan.target, { cores: 8, hereCores: 2, threads: 6, verifiable: false });
    const titles = lensTitles(s);
    assert.ok(
      titles.some((t) => t.includes('predicted for 8 cores — not verifiable here (this machine has 2)')),
      JSON.stringify(titles),
    );
    // The 2-core measurement is never shown as the plan's figure.
    assert.ok(!titles.some((t) => t.includes('1.7×')), JSON.stringify(titles));
  });

  it('answers the what-if hover for the target cores', async () => {
    const { s } = await profiledFor(8);
    const text = (hover(s.views(URI), FILE, { line: 12, character: 4 })!.contents as { value: string }).value;
    assert.match(text, /- on 8 cores: ≈ [\d.]+k? batches\/s as written, ≈ [\d.]+k? batches\/s with the plan \(predicted; 2 cores here\)/);
  });

  it('labels nothing when the setting is the cores here', async () => {
    const { s, plan } = await profiledFor(2);
    assert.deepEqual(plan.target, { cores: 2, hereCores: 2, threads: 1, verifiable: true });
    const titles = lensTitles(s);
    assert.ok(
      titles.some((t) => /est\. [\d.]+×, verified 1\.7× ± 0\.1/.test(t)),
      JSON.stringify(titles),
    );
    assert.ok(!titles.some((t) => t.includes('predicted for')), JSON.stringify(titles));
    const text = (hover(s.views(URI), FILE, { line: 12, character: 4 })!.contents as { value: string }).value;
    assert.doesNotMatch(text, /on 2 cores:/);
  });
});
