import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { codeLenses, resolveCodeLens } from '../../../src/server/features/codeLens';
import { Session } from '../../../src/server/session';
import { DEFAULT_SETTINGS } from '../../../src/shared/settings';
import { FIXTURES } from '../server/helpers';
import { handMade } from '../server/handmade';

const FILE = path.join(FIXTURES, 'project', 'pipelines.ts');
const URI = pathToFileURL(FILE).href;
const TEXT = readFileSync(FILE, 'utf8');
const DECODE_LINE = 12;

/** The lens titles on `images`' decode line, after a profile in which map(decode) ran on a cluster of `workers` workers (or locally). */
function decodeLens(workers: number | undefined): string[] {
  const s = new Session(() => undefined);
  s.update(URI, 1, TEXT);
  const images = s.views(URI).find((v) => v.graph.name === 'images')!.graph;
  const hand = handMade(images, 'map(decode)', () => []);
  const decodeId = images.ops.find((o) => o.label === 'map(decode)')!.id;
  const ops = hand.profile.ops.map((o) =>
    o.id === decodeId && workers !== undefined ? { ...o, placement: 'remote' as const, knobs: { ...o.knobs, cluster: 'images' }, counters: { ...o.counters, remoteWorkers: workers, remoteConcurrency: 4 * workers } } : o,
  );
  s.store.setProfile(URI, 'images', { ...hand, profile: { ...hand.profile, ops }, text: TEXT, at: '2026-11-30T18:00:00.000Z' }, 'defaults');
  const views = s.views(URI);
  return codeLenses(views, FILE, DEFAULT_SETTINGS.codeLens)
    .map((l) => resolveCodeLens(l, views))
    .filter((l) => l.range.start.line === DECODE_LINE)
    .map((l) => l.command!.title);
}

describe('the lens of a stage that ran on a cluster', () => {
  it('begins with the cluster and its workers, then the rate as for any stage', () => {
    const [title] = decodeLens(4);
    assert.match(title, /^cluster: 4 workers · /);
    // The rest is what the same stage says when it runs locally.
    assert.equal(title.replace(/^cluster: 4 workers · /, ''), decodeLens(undefined)[0]);
  });

  it('says "1 worker" in the singular', () => {
    assert.match(decodeLens(1)[0], /^cluster: 1 worker · /);
  });
});
