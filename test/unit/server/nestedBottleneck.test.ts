/**
 * A bottleneck written inside another operator's fn (the chain an interleave opens per shard):
 * the profile records those operators at their own call sites, nested in the interleave; the
 * editor must show their numbers on their own line and name the bottleneck there, as `plumber
 * plan` does — not leave every visible lens at "bound ∞".
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { codeLenses, resolveCodeLens, type LensData } from '../../../src/server/features/codeLens';
import { diagnostics } from '../../../src/server/features/diagnostics';
import { pipelines } from '../../../src/server/features/pipelines';
import { Session } from '../../../src/server/session';
import { PROFILE_VERSION, type OpProfile, type Profile } from '../../../src/shared/profile';
import type { Analysis, OpAnalysis } from '../../../src/shared/analysis';
import { newCounters } from '../../../src/data/tracing';
import { DEFAULT_SETTINGS } from '../../../src/shared/settings';
import { FIXTURES } from './helpers';

const FILE = path.join(FIXTURES, 'project', 'nested-interleave.ts');
const URI = pathToFileURL(FILE).href;
const TEXT = readFileSync(FILE, 'utf8');
const LINES = TEXT.split('\n');

/** The runner's id of the operator whose name is the `nth` occurrence of `needle` on line `line` (1-based). */
function idAt(line: number, needle: string): string {
  const col = LINES[line - 1]!.indexOf(needle);
  assert.ok(col >= 0, `${needle} on line ${line}`);
  return `${line}:${col + 1}`;
}

const FROM = idAt(9, 'from');
const INTERLEAVE = idAt(10, 'interleave');
const BATCH = idAt(11, 'batch');
const RANGE = idAt(10, 'range');
const MAP = idAt(10, 'map');

/** A profile shaped as the runner records this file (checked against `plumber plan --json`): the shard's range and map nested in the interleave. */
function recorded(): { profile: Profile; analysis: Analysis } {
  const op = (id: string, kind: OpProfile['kind'], inputs: string[], produced: number, selfSeconds: number, parentId?: string): OpProfile => {
    const [line, column] = id.split(':').map(Number) as [number, number];
    return {
      id,
      kind,
      inputs,
      placement: 'main',
      knobs: {},
      random: false,
      site: { file: FILE, line, column },
      ...(parentId ? { parentId } : {}),
      counters: { ...newCounters(), produced, pulled: produced, calls: produced, selfSeconds },
    };
  };
  const ops = [
    op(FROM, 'from', [], 4, 0),
    op(INTERLEAVE, 'interleave', [FROM], 1056, 0.001),
    op(BATCH, 'batch', [INTERLEAVE], 132, 0.001),
    op(RANGE, 'range', [], 1056, 0.001, INTERLEAVE),
    op(MAP, 'map', [RANGE], 1056, 0.51, INTERLEAVE),
  ];
  const profile: Profile = {
    version: PROFILE_VERSION,
    pipeline: { file: FILE, exportName: 'stream', rootId: BATCH },
    machine: { cores: 2, memoryTotalBytes: 8e9, memoryFreeBytes: 4e9, nodeVersion: 'v20.20.2', platform: 'linux', arch: 'x64', cpuModel: 'test', libuvThreads: 4, cpuClock: 'schedstat' },
    run: {
      startedAt: '2026-12-05T12:00:00.000Z',
      elements: 132,
      seconds: 0.52,
      warmupElements: 20,
      warmupSeconds: 0.5,
      converged: true,
      endReason: 'converged',
      rateEstimates: [255, 257],
      overrides: {},
      mainThreadCpuSeconds: 0.52,
      processCpuSeconds: 0.53,
      peakRssBytes: 1e8,
    },
    ops,
  };
  const an = (opId: string, visitRatio: number, bound: number, cpuShare: number): OpAnalysis => ({
    opId,
    visitRatio,
    measuredRate: 257 * visitRatio,
    ratePerCore: Number.isFinite(bound) ? bound : Infinity,
    cpuPerRootElement: cpuShare * 0.0038,
    cpuShare,
    mainThreadPerRootElement: cpuShare * 0.0038,
    bound,
    placement: 'main',
    isBottleneck: opId === MAP,
  });
  const reason = 'All threads together need 3.84 ms of CPU per batch; 1 core gives at most 260 batches/s. map(heavy) uses 100% of it.';
  const analysis: Analysis = {
    measuredRate: 257,
    bound: 260,
    bottleneck: { resource: 'cpu', opId: MAP, reason },
    bounds: [{ resource: 'cpu', opId: MAP, rate: 260, detail: reason }],
    ops: [an(FROM, 0.03, Infinity, 0), an(INTERLEAVE, 8, Infinity, 0), an(BATCH, 1, Infinity, 0), an(RANGE, 8, Infinity, 0), an(MAP, 8, 260, 1)],
    cores: 2,
  };
  return { profile, analysis };
}

function session(): Session {
  const s = new Session(() => undefined);
  s.update(URI, 1, TEXT);
  const { profile, analysis } = recorded();
  const plan = { changes: [], currentRate: 257, predictedRate: 257, predictedBound: 260, predictedBottleneck: { resource: 'cpu' as const, reason: 'all cores busy' }, overrides: {} };
  s.store.setProfile(URI, 'stream', { profile, analysis, plan, text: TEXT, at: '2026-12-05T12:00:00.000Z' }, 'defaults');
  return s;
}

/** Resolved operator lens titles by 1-based line. */
function opLenses(s: Session): Map<number, string[]> {
  const views = s.views(URI);
  const out = new Map<number, string[]>();
  for (const l of codeLenses(views, FILE, DEFAULT_SETTINGS.codeLens)) {
    if ((l.data as LensData).target !== 'op') continue;
    const title = resolveCodeLens(l, views).command!.title;
    const line = l.range.start.line + 1;
    out.set(line, [...(out.get(line) ?? []), title]);
  }
  return out;
}

describe("a bottleneck inside an interleave's fn, in the editor", () => {
  it("names the bottleneck on the nested map's own line, as plumber plan does", () => {
    const lenses = opLenses(session());
    const line10 = lenses.get(10) ?? [];
    assert.ok(
      line10.some((t) => /bottleneck: all cores busy/.test(t) && /bound 260/.test(t)),
      JSON.stringify([...lenses]),
    );
  });

  it('gives the nested operators their own lenses beside the interleave on the same line', () => {
    const s = session();
    const views = s.views(URI);
    const onLine10 = codeLenses(views, FILE, DEFAULT_SETTINGS.codeLens)
      .filter((l) => (l.data as LensData).target === 'op' && l.range.start.line === 9)
      .map((l) => (l.data as LensData).opId);
    assert.deepEqual([...onLine10].sort(), [INTERLEAVE, RANGE, MAP].sort());
  });

  it('marks the nested map in the tree and puts the bottleneck warning on it', () => {
    const s = session();
    const tree = pipelines(s.views(URI), FILE, []).find((p) => p.name === 'stream')!;
    assert.deepEqual(
      tree.ops.filter((o) => o.severity === 'bottleneck').map((o) => o.id),
      [MAP],
    );
    const warning = diagnostics(URI, FILE, s.views(URI), [], DEFAULT_SETTINGS.diagnostics).find((d) => d.code === 'plumber/bottleneck');
    assert.ok(warning, 'a bottleneck warning');
    assert.equal(`${warning.range.start.line + 1}:${warning.range.start.character + 1}`, MAP);
  });
});
