/**
 * Peak memory in the editor (issue 52, part 1): a profile whose run measured the process's memory
 * gets its projection from the model, and the hover, the tree and the report show it: per operator
 * what its buffers hold ("batch ≈ 800 kB (8 elements) of ≈ 151 MB at peak (projected)"), and the
 * pipeline's peak. The diagnose is scripted (the engine is tested in test/unit/engine); the
 * analysis is the model's own on the profile.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { hover } from '../../../src/server/features/hover';
import { pipelines } from '../../../src/server/features/pipelines';
import { profilePipelines } from '../../../src/server/features/profile';
import { report } from '../../../src/server/features/report';
import { Session } from '../../../src/server/session';
import { analyze } from '../../../src/model';
import type { Diagnosis } from '../../../src/engine/diagnose';
import { DEFAULT_SETTINGS } from '../../../src/shared/settings';
import { FIXTURES } from './helpers';
import { handMade } from './handmade';

const FILE = path.join(FIXTURES, 'project', 'pipelines.ts');
const URI = pathToFileURL(FILE).href;
const TEXT = readFileSync(FILE, 'utf8');

/** Profiles `images` from the editor: map(decode) hands on 100 kB elements; the process measured 150 MB before the pipeline and 151 MB at its peak. */
async function profiled(): Promise<Session> {
  const s = new Session(() => undefined);
  s.update(URI, 1, TEXT);
  const images = s.views(URI).find((v) => v.graph.name === 'images')!.graph;
  const hand = handMade(images, 'map(decode)', () => []);
  const decode = images.ops.find((o) => o.label === 'map(decode)')!.id;
  const profile = {
    ...hand.profile,
    run: { ...hand.profile.run, baseRssBytes: 150e6, windowPeakRssBytes: 151e6 },
    ops: hand.profile.ops.map((o) => (o.id === decode ? { ...o, counters: { ...o.counters, bytesProduced: o.counters.produced * 100e3 } } : o)),
  };
  const analysis = analyze(profile);
  await profilePipelines(
    { uri: URI, pipeline: 'images' },
    {
      trusted: true,
      settings: structuredClone(DEFAULT_SETTINGS),
      store: s.store,
      views: (u) => s.views(u),
      graphs: s.workspace,
      run: () => Promise.resolve(profile),
      diagnose: async (input): Promise<Diagnosis> => {
        await input.run({}, 'profile');
        return { first: profile, analysis, plan: { ...hand.plan, changes: [] }, last: profile, profiles: [profile] };
      },
      progress: () => undefined,
    },
  );
  return s;
}

describe('Peak memory, in the editor', () => {
  it('shows what the batch holds at the projected peak in its hover', async () => {
    const s = await profiled();
    // `.batch(8); // batches` is on the 14th line of the fixture, `.map(decode…` on the 13th.
    const text = (hover(s.views(URI), FILE, { line: 13, character: 4 })!.contents as { value: string }).value;
    assert.match(text, /- Memory: batch ≈ 800 kB \(8 elements\) of ≈ 151 MB at peak \(projected\)/);
    // An operator that holds nothing says nothing of memory.
    const decode = (hover(s.views(URI), FILE, { line: 12, character: 4 })!.contents as { value: string }).value;
    assert.doesNotMatch(decode, /Memory:/);
  });

  it("gives the tree the operator's part and the pipeline's peak, and the report the projection", async () => {
    const s = await profiled();
    const summary = pipelines(s.views(URI), FILE, []).find((p) => p.name === 'images')!;
    assert.equal(summary.memory, '≈ 151 MB at peak (projected): batch 800 kB');
    assert.equal(summary.ops.find((o) => o.label === 'batch(8)')?.memory, 'batch ≈ 800 kB (8 elements) of ≈ 151 MB at peak (projected)');
    const r = report(
      s.views(URI).find((v) => v.graph.name === 'images')!,
      FILE,
      [],
      [],
    );
    assert.equal(r.analysis?.memory?.peakBytes, 151e6);
  });
});
