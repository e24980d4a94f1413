/**
 * What the editor shows of a verified plan: the lens carries the verified figure, a no-gain plan
 * offers no fix and says so, an unverified plan says it is not verified, each quick fix carries its
 * own predicted effect, and a change verification dropped is never offered — plain inputs (a
 * session with a hand-made profile and plan) to plain LSP outputs.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { codeActions } from '../../../src/server/features/codeActions';
import { codeLenses, resolveCodeLens, type LensData } from '../../../src/server/features/codeLens';
import { diagnostics } from '../../../src/server/features/diagnostics';
import { fixAll } from '../../../src/server/features/fixAll';
import { hover } from '../../../src/server/features/hover';
import { pipelines } from '../../../src/server/features/pipelines';
import { report } from '../../../src/server/features/report';
import { reportAdvice } from '../../../src/server/features/advice';
import { Session } from '../../../src/server/session';
import { changeKey, type Plan, type PlanChange, type Verification } from '../../../src/shared/analysis';
import { DEFAULT_SETTINGS } from '../../../src/shared/settings';
import { describePipeline, statusText } from '../../../src/client/views/format';
import { FIXTURES } from './helpers';
import { handMade } from './handmade';

const FILE = path.join(FIXTURES, 'project', 'pipelines.ts');
const URI = pathToFileURL(FILE).href;
const TEXT = readFileSync(FILE, 'utf8');
/** Lines (0-based) of the `images` pipeline in the fixture. */
const HEAD = 11;
const DECODE = 12;
const BATCH = 13;

interface Scenario {
  changes: PlanChange[];
  /** Turns the hand-made plan (both changes, 310 → 2108 el/s) into the one under test. */
  plan(base: Plan, parallelism: PlanChange, prefetch: PlanChange): Plan;
}

/** A session with the fixture open and `images` profiled, its plan shaped by `shape`. */
function session(shape: Scenario['plan']): Session {
  const s = new Session(() => undefined);
  s.update(URI, 1, TEXT);
  const images = s.views(URI).find((v) => v.graph.name === 'images')!.graph;
  const hand = handMade(images, 'map(decode)', (id) => [
    { kind: 'parallelism', opId: id('map(decode)'), from: 1, to: 2, reason: 'two cores are idle', predictedRate: 496 },
    { kind: 'prefetch', opId: id('batch(8)'), existing: false, size: 4, reason: 'the consumer waits', predictedRate: 341 },
  ]);
  const [parallelism, prefetch] = hand.plan.changes as [PlanChange, PlanChange];
  s.store.setProfile(
    URI,
    'images',
    { profile: hand.profile, analysis: { ...hand.analysis, coresNote: '1.1 of 2 cores free: planning for 1' }, plan: shape(hand.plan, parallelism, prefetch), text: TEXT, at: '2026-11-29T18:00:00.000Z' },
    'defaults',
  );
  return s;
}

const asWritten = { rate: 310, halfWidth: 9, windows: 8 };

/** Verification kept the parallelism change (measured 1.7× ± 0.1) and dropped the prefetch (0.97× alone). */
function verifiedGain(base: Plan, parallelism: PlanChange, prefetch: PlanChange, keepDroppedInChanges = false): Plan {
  const v: Verification = {
    verdict: 'gain',
    asWritten,
    kept: { changes: [changeKey(parallelism)], measured: { rate: 527, halfWidth: 20, windows: 8 }, predictedRate: 558 },
    tried: [
      { changes: [], measured: asWritten },
      { changes: [changeKey(parallelism), changeKey(prefetch)], measured: { rate: 480, halfWidth: 30, windows: 4 }, predictedRate: 2108 },
      { changes: [changeKey(parallelism)], measured: { rate: 527, halfWidth: 20, windows: 8 }, predictedRate: 558 },
      { changes: [changeKey(prefetch)], measured: { rate: 301, halfWidth: 12, windows: 4 }, predictedRate: 341 },
    ],
    speedup: 1.7,
    speedupHalfWidth: 0.1,
    dropped: [{ change: prefetch, why: 'measured 0.97× alone' }],
    summary: 'verified 1.7× ± 0.1',
    seconds: 8.4,
  };
  return { ...base, changes: keepDroppedInChanges ? [parallelism, prefetch] : [parallelism], predictedRate: 558, verification: v };
}

/** Verification measured nothing reliably faster: the plan keeps no change. */
function noGain(base: Plan, parallelism: PlanChange, prefetch: PlanChange): Plan {
  const v: Verification = {
    verdict: 'no-gain',
    asWritten,
    kept: { changes: [], measured: asWritten },
    tried: [
      { changes: [], measured: asWritten },
      { changes: [changeKey(parallelism), changeKey(prefetch)], measured: { rate: 300, halfWidth: 25, windows: 4 }, predictedRate: 2108 },
    ],
    speedup: 1,
    speedupHalfWidth: 0.04,
    dropped: [
      { change: parallelism, why: 'the plan measured 0.97×' },
      { change: prefetch, why: 'the plan measured 0.97×' },
    ],
    summary: 'no reliable gain on this machine right now: the plan measured 300/s ± 25 against 310/s ± 9 as written (0.97× ± 0.09)',
    seconds: 6,
  };
  return { ...base, changes: [], predictedRate: 310, verification: v };
}

function headLenses(s: Session): string[] {
  const views = s.views(URI);
  return codeLenses(views, FILE, DEFAULT_SETTINGS.codeLens)
    .map((l) => resolveCodeLens(l, views))
    .filter((l) => l.range.start.line === HEAD && (l.data as LensData).target !== 'op')
    .map((l) => l.command!.title);
}

function actionTitles(s: Session, line: number): string[] {
  const range = { start: { line, character: 4 }, end: { line, character: 4 } };
  return codeActions(s.views(URI), FILE, range, s.actionDeps(true)).map((a) => a.title);
}

describe('Advice the editor shows', () => {
  it("says why a plan proposes no change without claiming the machine is the limit when an operator's waits bind", () => {
    const s = new Session(() => undefined);
    s.update(URI, 1, TEXT);
    const hand = handMade(s.views(URI).find((v) => v.graph.name === 'images')!.graph, 'map(decode)', () => []);
    const none: Plan = { ...hand.plan, changes: [], verification: undefined };
    const headline = (resource: 'latency' | 'main-thread' | 'cpu'): string => reportAdvice(none, { ...hand.analysis, bottleneck: { ...hand.analysis.bottleneck, resource } }, hand.profile).headline;
    assert.equal(headline('latency'), 'the plan proposes no change: no knob Plumber can turn relieves what binds (the bottleneck says what would)');
    // The main thread is one of the machine's threads: other cores may be idle.
    assert.equal(headline('main-thread'), 'the plan proposes no change: the main thread binds, and none of its work can move off it at a gain (the bottleneck says what binds)');
    assert.equal(headline('cpu'), 'the plan proposes no change: the pipeline already runs at what this machine allows');
  });

  it("shows the plan's notes, as plan prints them, with or without verification", () => {
    const s = new Session(() => undefined);
    s.update(URI, 1, TEXT);
    const hand = handMade(s.views(URI).find((v) => v.graph.name === 'images')!.graph, 'map(decode)', () => []);
    const notes = ["cache() at 12:4 comes after map(augment), which is random: it stores the first epoch's draws and replays them every epoch. Move cache() above map(augment)."];
    const none: Plan = { ...hand.plan, changes: [], verification: undefined, notes };
    assert.deepEqual(reportAdvice(none, hand.analysis, hand.profile).notes, notes);
    assert.deepEqual(reportAdvice({ ...none, notes: undefined }, hand.analysis, hand.profile).notes, []);
  });

  describe('for a verified plan', () => {
    const s = session(verifiedGain);

    it('puts the verified figure beside the estimate on the "Apply all" lens', () => {
      assert.deepEqual(headLenses(s), ['Pipeline 310 batches/s · bound 2.1k', 'Profile again', 'Apply all Plumber fixes (est. 1.8×, verified 1.7× ± 0.1)']);
    });

    it("titles each quick fix with its own effect: the model's estimate alone and what it measured alone", () => {
      assert.deepEqual(actionTitles(s, DECODE), ['Apply Plumber fix: set parallelism of map(decode) to 2 (est. 1.6×, measured 1.7× ± 0.1 alone)', 'Apply all Plumber fixes (est. 1.8×, verified 1.7× ± 0.1)']);
    });

    it('titles a kept change the model does not price with what it measured over the other changes', () => {
      // A prefetch at the end (verification's last try): no estimate of its own, measured on top of
      // the kept parallelism (527/s) at 640/s.
      const over = session((base, parallelism, prefetch) => {
        const unpriced = { ...prefetch, predictedRate: undefined };
        const keptWith = { changes: [changeKey(parallelism), changeKey(prefetch)], measured: { rate: 640, halfWidth: 25, windows: 4 } };
        const v: Verification = {
          verdict: 'gain',
          asWritten,
          kept: keptWith,
          tried: [{ changes: [], measured: asWritten }, { changes: [changeKey(parallelism)], measured: { rate: 527, halfWidth: 20, windows: 8 }, predictedRate: 558 }, keptWith],
          speedup: 2.06,
          speedupHalfWidth: 0.1,
          dropped: [],
          summary: 'verified 2.1× ± 0.1',
          seconds: 9,
        };
        return { ...base, changes: [parallelism, unpriced], predictedRate: 558, verification: v };
      });
      assert.deepEqual(actionTitles(over, BATCH), ['Apply Plumber fix: insert prefetch(4) after batch(8) (measured 1.2× ± 0.1 over the other changes)', 'Apply all Plumber fixes (est. 1.8×, verified 2.1× ± 0.1)']);
      // Without the run of the other changes alone there is nothing to say.
      const bare = session((base, parallelism, prefetch) => {
        const keptWith = { changes: [changeKey(parallelism), changeKey(prefetch)], measured: { rate: 640, halfWidth: 25, windows: 4 } };
        const v: Verification = {
          verdict: 'gain',
          asWritten,
          kept: keptWith,
          tried: [{ changes: [], measured: asWritten }, keptWith],
          speedup: 2.06,
          speedupHalfWidth: 0.1,
          dropped: [],
          summary: 'verified 2.1× ± 0.1',
          seconds: 9,
        };
        return { ...base, changes: [parallelism, { ...prefetch, predictedRate: undefined }], predictedRate: 558, verification: v };
      });
      assert.equal(actionTitles(bare, BATCH)[0], 'Apply Plumber fix: insert prefetch(4) after batch(8)');
    });

    it("writes a cache's large figures alike in the estimate and the verified figure", () => {
      // A cache that serves epochs from memory: 310 → 4,356,780 el/s predicted, 14,054× verified.
      const cached = session((base, parallelism, prefetch) => {
        const plan = verifiedGain(base, parallelism, prefetch);
        const v = plan.verification!;
        return { ...plan, predictedRate: 310 * 14_053.9, verification: { ...v, speedup: 14_053.9, speedupHalfWidth: 1_373.3, summary: 'verified 14,054× ± 1,373' } };
      });
      assert.equal(headLenses(cached)[2], 'Apply all Plumber fixes (est. 14,054×, verified 14,054× ± 1,373)');
    });

    it('never offers the change verification dropped, not even disabled', () => {
      assert.ok(!actionTitles(s, BATCH).some((t) => /prefetch/.test(t)), actionTitles(s, BATCH).join('\n'));
      const tree = pipelines(s.views(URI), FILE, []).find((p) => p.name === 'images')!;
      assert.equal(tree.ops.find((o) => o.label === 'batch(8)')!.fixTitle, undefined);
      const hovered = hover(s.views(URI), FILE, { line: BATCH, character: 4 })!;
      // The hover's markdown escapes the reason's text: it renders as "(measured 0.97× alone)".
      assert.match((hovered.contents as { value: string }).value, /dropped by verification \(measured 0\\\.97× alone\)/);
    });

    it('keeps a dropped change out of the fixes even when a plan still lists it', () => {
      const leaky = session((b, p, f) => verifiedGain(b, p, f, true));
      assert.ok(!actionTitles(leaky, BATCH).some((t) => /prefetch/.test(t)));
      const all = fixAll(leaky.views(URI), { uri: URI, pipeline: 'images' }, leaky.actionDeps(false));
      assert.equal(all.title, 'Apply all Plumber fixes (1 change, est. 1.8×, verified 1.7× ± 0.1)');
    });

    it('gives the tree the verdict, and the same fix title as the quick fix so "Apply fix" finds it', () => {
      const tree = pipelines(s.views(URI), FILE, []).find((p) => p.name === 'images')!;
      assert.equal(tree.verdict, 'gain');
      assert.deepEqual(tree.verified, { speedup: 1.7, halfWidth: 0.1 });
      assert.equal(describePipeline(tree), '310 batches/s · fixes: verified 1.7×');
      assert.equal(statusText(tree), 'Plumber: images 310 batches/s (fixes: verified 1.7×)');
      assert.equal(tree.ops.find((o) => o.label.startsWith('map(decode'))!.fixTitle, actionTitles(s, DECODE)[0]);
    });

    it('reports as written against what was kept, with the spread, what was tried and dropped, and the cores note', () => {
      const view = s.views(URI).find((v) => v.graph.name === 'images')!;
      const advice = report(view, FILE, [], []).advice!;
      assert.equal(advice.verdict, 'gain');
      assert.equal(advice.headline, 'est. 1.8×, verified 1.7× ± 0.1');
      assert.equal(advice.coresNote, '1.1 of 2 cores free: planning for 1');
      assert.deepEqual(
        advice.tried.map((t) => [t.label, t.measured, t.speedup, t.kept]),
        [
          ['as written', '310 batches/s ± 9', undefined, false],
          ['set parallelism of map(decode) to 2 + insert prefetch(4) after batch(8)', '480 batches/s ± 30', '1.5× ± 0.1', false],
          ['set parallelism of map(decode) to 2', '527 batches/s ± 20', '1.7× ± 0.1', true],
          ['insert prefetch(4) after batch(8)', '301 batches/s ± 12', '0.97× ± 0.05', false],
        ],
      );
      assert.deepEqual(advice.dropped, [{ title: 'insert prefetch(4) after batch(8)', why: 'measured 0.97× alone' }]);
    });
  });

  describe('for a plan whose count verification doubled', () => {
    // The plan gave map(decode) 2; the doubled count, 4, measured reliably faster and is kept.
    const s = session((base, parallelism) => {
      const at = (to: number): PlanChange => ({ ...(parallelism as Extract<PlanChange, { kind: 'parallelism' }>), to });
      const key = changeKey(parallelism);
      const v: Verification = {
        verdict: 'gain',
        asWritten,
        kept: { changes: [key], measured: { rate: 620, halfWidth: 20, windows: 8 }, predictedRate: 558, values: { [key]: 4 } },
        tried: [
          { changes: [], measured: asWritten },
          { changes: [key], measured: { rate: 527, halfWidth: 20, windows: 8 }, predictedRate: 558, values: { [key]: 2 } },
          { changes: [key], measured: { rate: 620, halfWidth: 20, windows: 8 }, predictedRate: 558, values: { [key]: 4 } },
        ],
        speedup: 2,
        speedupHalfWidth: 0.1,
        dropped: [],
        summary: 'verified 2.0× ± 0.1',
        seconds: 9,
      };
      return { ...base, changes: [at(4)], predictedRate: 558, verification: v };
    });

    it('labels each configuration tried with the count it ran, and marks only the doubled one kept', () => {
      const view = s.views(URI).find((v) => v.graph.name === 'images')!;
      assert.deepEqual(
        report(view, FILE, [], []).advice!.tried.map((t) => [t.label, t.kept]),
        [
          ['as written', false],
          ['set parallelism of map(decode) to 2', false],
          ['set parallelism of map(decode) to 4', true],
        ],
      );
    });

    it("titles the quick fix with what the count it sets measured alone, not the plan's count", () => {
      assert.equal(actionTitles(s, DECODE)[0], 'Apply Plumber fix: set parallelism of map(decode) to 4 (est. 1.6×, measured 2.0× ± 0.1 alone)');
    });
  });

  describe('for a plan verification found no gain in', () => {
    const s = session(noGain);

    it('offers no fix and says "no reliable gain on this machine right now" on the lens', () => {
      assert.deepEqual(headLenses(s), ['Pipeline 310 batches/s · bound 2.1k', 'Profile again', 'no reliable gain on this machine right now']);
      assert.deepEqual(actionTitles(s, DECODE), []);
      assert.deepEqual(actionTitles(s, BATCH), []);
    });

    it('refuses "Apply all" with the measurement, and tells the tree and the diagnostics', () => {
      const all = fixAll(s.views(URI), { uri: URI, pipeline: 'images' }, s.actionDeps(false));
      assert.equal(all.edit, undefined);
      assert.match(all.reason!, /no reliable gain on this machine right now: the plan measured 300\/s/);
      const tree = pipelines(s.views(URI), FILE, []).find((p) => p.name === 'images')!;
      assert.equal(tree.verdict, 'no-gain');
      assert.equal(describePipeline(tree), '310 batches/s · no reliable gain');
      const warning = diagnostics(URI, FILE, s.views(URI), [], DEFAULT_SETTINGS.diagnostics).find((d) => d.code === 'plumber/bottleneck')!;
      assert.match(String(warning.message), /no reliable gain on this machine right now, so no fix is offered/);
      assert.deepEqual(warning.relatedInformation, []);
    });
  });

  describe('for a plan no run verified', () => {
    const s = session((base) => base);

    it('marks the estimate "not verified" on the lens and in the tree', () => {
      assert.deepEqual(headLenses(s).slice(2), ['Apply all Plumber fixes (est. 6.8×, not verified)']);
      const tree = pipelines(s.views(URI), FILE, []).find((p) => p.name === 'images')!;
      assert.equal(tree.verdict, 'unverified');
      assert.equal(describePipeline(tree), '310 batches/s · fixes: est. 6.8× (not verified)');
    });

    it("still titles each quick fix with the model's estimate for it alone", () => {
      assert.equal(actionTitles(s, DECODE)[0], 'Apply Plumber fix: set parallelism of map(decode) to 2 (est. 1.6× alone)');
    });

    it('falls back to the plain title when the model gave no per-change estimate', () => {
      const bare = session((base) => ({ ...base, changes: base.changes.map(({ predictedRate: _drop, ...c }) => c as PlanChange) }));
      assert.equal(actionTitles(bare, DECODE)[0], 'Apply Plumber fix: set parallelism of map(decode) to 2');
    });
  });
});

describe("the bottleneck of an interleave's plain iterables, in the editor", () => {
  // The iterables an interleave's fn returns have no place in the source (the profile's `from#0`,
  // nested in the interleave): their bottleneck is shown on the interleave that opens them.
  const SHARDS_FILE = path.join(FIXTURES, 'project', 'shards.ts');
  const SHARDS_URI = pathToFileURL(SHARDS_FILE).href;
  const SHARDS_TEXT = [
    "import { from } from 'plumber-data';",
    '',
    'async function* openShard(name: string): AsyncGenerator<string> {',
    '  yield name;',
    '}',
    '',
    "export const stream = from(['a', 'b'])",
    '  .interleave((n) => openShard(n), { cycleLength: 1 })',
    '  .batch(8);',
    '',
  ].join('\n');
  const INTERLEAVE_LINE = 7;

  function shardsSession(): Session {
    const s = new Session(() => undefined);
    s.update(SHARDS_URI, 1, SHARDS_TEXT);
    const graph = s.views(SHARDS_URI).find((v) => v.graph.name === 'stream')!.graph;
    const interleave = graph.ops.find((o) => o.kind === 'interleave')!;
    const hand = handMade(graph, interleave.label, () => []);
    const inner = { ...hand.profile.ops.find((o) => o.id === interleave.id)!, id: 'from#0', kind: 'from' as const, inputs: [], parentId: interleave.id };
    delete (inner as { site?: unknown }).site;
    hand.profile.ops.push(inner);
    const reason = 'inner iterable of interleave on line 8 waits 2.19 ms per call, 8 calls per element, with 1 call in flight: at most 57 el/s.';
    const analysis = { ...hand.analysis, bottleneck: { resource: 'latency' as const, opId: 'from#0', reason }, ops: hand.analysis.ops.map((a) => ({ ...a, isBottleneck: false })) };
    s.store.setProfile(SHARDS_URI, 'stream', { profile: hand.profile, analysis, plan: { ...hand.plan, changes: [] }, text: SHARDS_TEXT, at: '2026-12-03T09:00:00.000Z' }, 'defaults');
    return s;
  }

  it('marks the interleave in the tree, puts the warning on it and explains it in its hover', () => {
    const s = shardsSession();
    const tree = pipelines(s.views(SHARDS_URI), SHARDS_FILE, []).find((p) => p.name === 'stream')!;
    const marked = tree.ops.filter((o) => o.severity === 'bottleneck');
    assert.deepEqual(
      marked.map((o) => o.kind),
      ['interleave'],
    );
    assert.match(marked[0]!.reason ?? '', /inner iterable of interleave on line 8 waits/);
    const warning = diagnostics(SHARDS_URI, SHARDS_FILE, s.views(SHARDS_URI), [], DEFAULT_SETTINGS.diagnostics).find((d) => d.code === 'plumber/bottleneck');
    assert.ok(warning, 'the bottleneck has a place to be shown');
    assert.equal(warning.range.start.line, INTERLEAVE_LINE);
    const hovered = hover(s.views(SHARDS_URI), SHARDS_FILE, { line: INTERLEAVE_LINE, character: 4 })!;
    assert.match(JSON.stringify(hovered.contents), /\*\*Why:\*\* inner iterable of interleave on line 8 waits/);
    const views = s.views(SHARDS_URI);
    const lens = codeLenses(views, SHARDS_FILE, DEFAULT_SETTINGS.codeLens)
      .map((l) => resolveCodeLens(l, views))
      .filter((l) => l.range.start.line === INTERLEAVE_LINE && (l.data as LensData).target === 'op')
      .map((l) => l.command!.title);
    assert.ok(
      lens.some((t) => /bottleneck: /.test(t)),
      JSON.stringify(lens),
    );
  });
});
