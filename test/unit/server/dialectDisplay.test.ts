/**
 * The editor on pipelines written in other dialects: lenses, the tree and the bottleneck warning
 * work from a dialect graph and a profile as they do for plumber-data (joined by op id), the places
 * Plumber stops are Information diagnostics, and the lints speak the dialect's language.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DiagnosticSeverity } from 'vscode-languageserver';
import { codeLenses, resolveCodeLens, type LensData } from '../../../src/server/features/codeLens';
import { diagnostics } from '../../../src/server/features/diagnostics';
import { pipelines } from '../../../src/server/features/pipelines';
import { Session } from '../../../src/server/session';
import { DEFAULT_SETTINGS } from '../../../src/shared/settings';
import { handMade } from './handmade';

const DIALECTS = path.resolve(__dirname, '../../fixtures/pipelines/dialects');

function opened(name: string, text?: string): { s: Session; uri: string; file: string; text: string } {
  const file = path.join(DIALECTS, name);
  const uri = pathToFileURL(file).href;
  const body = text ?? readFileSync(file, 'utf8');
  const s = new Session(() => undefined);
  s.update(uri, 1, body);
  return { s, uri, file, text: body };
}

describe('the editor on a Node-streams pipeline', () => {
  function profiled(): { s: Session; uri: string; file: string } {
    const o = opened('streams-chain.ts');
    const graph = o.s.views(o.uri).find((v) => v.graph.name === 'records')!.graph;
    const hand = handMade(graph, 'map(lookup)', () => []);
    o.s.store.setProfile(o.uri, 'records', { profile: hand.profile, analysis: hand.analysis, plan: hand.plan, text: o.text, at: '2026-12-05T12:00:00.000Z' }, 'defaults');
    return o;
  }

  it('puts each stage’s numbers on its own line and names the bottleneck on the map', () => {
    const { s, uri, file } = profiled();
    const views = s.views(uri);
    const byLine = new Map<number, string>();
    for (const l of codeLenses(views, file, DEFAULT_SETTINGS.codeLens)) {
      if ((l.data as LensData).target !== 'op') continue;
      byLine.set(l.range.start.line + 1, resolveCodeLens(l, views).command!.title);
    }
    assert.deepEqual([...byLine.keys()].sort(), [17, 18, 19, 20]);
    assert.match(byLine.get(18)!, /bottleneck: main thread/);
    assert.doesNotMatch(byLine.get(19)!, /bottleneck/);
    assert.doesNotMatch(byLine.get(18)!, /∞/);
  });

  it('says "waiting" on the lens of a stage held in series that mostly waits, and "one call at a time" otherwise', () => {
    const titleOf = (waiting: boolean): string => {
      const o = opened('streams-chain.ts');
      const graph = o.s.views(o.uri).find((v) => v.graph.name === 'records')!.graph;
      const hand = handMade(graph, 'map(lookup)', () => []);
      const bottleneck = { ...hand.analysis.bottleneck, resource: 'sequential-op' as const, ...(waiting ? { waiting } : {}) };
      o.s.store.setProfile(o.uri, 'records', { profile: hand.profile, analysis: { ...hand.analysis, bottleneck }, plan: hand.plan, text: o.text, at: '2026-12-05T12:00:00.000Z' }, 'defaults');
      const views = o.s.views(o.uri);
      const lens = codeLenses(views, o.file, DEFAULT_SETTINGS.codeLens).find((l) => (l.data as LensData).target === 'op' && l.range.start.line + 1 === 18)!;
      return resolveCodeLens(lens, views).command!.title;
    };
    assert.match(titleOf(true), /bottleneck: waiting, one element at a time/);
    assert.match(titleOf(false), /bottleneck: one call at a time/);
  });

  it('marks the map in the tree and puts the warning on it', () => {
    const { s, uri, file } = profiled();
    const tree = pipelines(s.views(uri), file, []).find((p) => p.name === 'records')!;
    assert.equal(tree.ops[0]!.label, 'map(lookup, { concurrency: 1 })');
    assert.equal(tree.ops[0]!.severity, 'bottleneck');
    const warning = diagnostics(uri, file, s.views(uri), [], DEFAULT_SETTINGS.diagnostics).find((d) => d.code === 'plumber/bottleneck')!;
    assert.equal(warning.range.start.line + 1, 18);
  });

  it('says "concurrency", not parallelism or worker threads, when a sync fn is given concurrency', () => {
    const text = [
      "import { Readable } from 'node:stream';",
      'function parse(s: string): number {',
      '  return s.length;',
      '}',
      "export const lengths = Readable.from(['a', 'bb']).map(parse, { concurrency: 4 });",
      '',
    ].join('\n');
    const { s, uri } = opened('inline-streams.ts', text);
    const found = s.lints(uri);
    const finding = found.find((f) => f.rule === 'plumber/parallelism-on-main-thread');
    assert.ok(finding, JSON.stringify(found.map((f) => f.rule)));
    assert.match(finding.message, /concurrency 4 has no effect/);
    assert.match(finding.message, /convert the pipeline to plumber-data/);
    assert.equal(
      found.some((f) => f.rule === 'plumber/no-prefetch-at-end'),
      false,
      'a Node stream has no prefetch() to add',
    );
  });
});

describe('the editor where Plumber stops following a chain', () => {
  it('shows each stop as an Information diagnostic with its sentence, at the place it names', () => {
    const { s, uri, file } = opened('stops.ts');
    const list = diagnostics(uri, file, s.views(uri), s.lints(uri), DEFAULT_SETTINGS.diagnostics, s.graph(uri).stops);
    const stops = list.filter((d) => d.code === 'plumber/not-followed');
    assert.deepEqual(
      stops.map((d) => d.range.start.line + 1).sort((a, b) => a - b),
      [11, 15, 18, 21],
    );
    assert.ok(stops.every((d) => d.severity === DiagnosticSeverity.Information));
    assert.match(String(stops.find((d) => d.range.start.line + 1 === 11)!.message), /gets more stages in a loop/);
  });

  it('says nothing when diagnostics are off', () => {
    const { s, uri, file } = opened('stops.ts');
    assert.deepEqual(diagnostics(uri, file, s.views(uri), [], { ...DEFAULT_SETTINGS.diagnostics, enabled: false }, s.graph(uri).stops), []);
  });
});

describe('the editor on an async-generator chain composed on one line', () => {
  it('names each stage on a line several stages share, so no rate is read as its neighbour’s', () => {
    const o = opened('generators.ts');
    const graph = o.s.views(o.uri).find((v) => v.graph.name === 'samples')!.graph;
    const decode = graph.ops.find((op) => op.label.startsWith('decode'))!;
    const hand = handMade(graph, decode.label, () => []);
    o.s.store.setProfile(o.uri, 'samples', { profile: hand.profile, analysis: hand.analysis, plan: hand.plan, text: o.text, at: '2026-12-05T12:00:00.000Z' }, 'defaults');
    const views = o.s.views(o.uri).filter((v) => v.graph.name === 'samples');
    const line = decode.name.range.start.line;
    const titles = codeLenses(views, o.file, DEFAULT_SETTINGS.codeLens)
      .filter((l) => (l.data as LensData).target === 'op' && l.range.start.line === line)
      .map((l) => resolveCodeLens(l, views).command!.title);
    assert.ok(titles.length >= 3, `several stages share the line: ${titles.join(' | ')}`);
    for (const t of titles) assert.match(t, /^\w+\(.*\): /, `each lens names its stage: ${t}`);
    const named = titles.filter((t) => /bottleneck/.test(t));
    assert.equal(named.length, 1, `one lens names the bottleneck: ${titles.join(' | ')}`);
    assert.match(named[0]!, /^decode\(/, 'and it is decode’s');
  });
});
