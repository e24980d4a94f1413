/**
 * A conversion the rewrite refuses is known from the source: diagnose drops it before any run,
 * with its reason as a note ("not offered: …"), never as a verification that failed; the plan's
 * other changes are verified as usual. The front door asks the real rewrite.
 */
import * as assert from 'node:assert/strict';
import { diagnose, diagnoseFile, type RunBudget, type RunPurpose } from '../../../../src/engine/diagnose';
import type { PlanChange } from '../../../../src/shared/analysis';
import type { Dialect, Lever, Overrides, Profile } from '../../../../src/shared/profile';
import { ProfileBuilder } from '../../model/builder';
import { convertOf, GENERATORS, readChain } from '../convertGraph';
import { oneFetchProfile } from './scripted';

/** The profile's operators as written in `dialect` with `levers`. */
function inDialect(profile: Profile, dialect: Dialect, levers: Lever[]): Profile {
  return { ...profile, ops: profile.ops.map((op) => ({ ...op, dialect, levers })) };
}

interface Call {
  purpose: RunPurpose;
  convert: boolean;
}

/** Runs that measure `first`'s rate, twice it for a run with any change, five windows within ±1%. */
function scriptedRuns(first: Profile) {
  const calls: Call[] = [];
  const run = async (overrides: Overrides, purpose: RunPurpose, budget?: RunBudget): Promise<Profile> => {
    calls.push({ purpose, convert: budget?.convert !== undefined });
    if (calls.length === 1) return first;
    const changed = budget?.convert !== undefined || Object.values(overrides).some((o) => Object.keys(o).length > 0);
    const rate = (first.run.elements / first.run.seconds) * (changed ? 2 : 1);
    const p = structuredClone(first);
    p.run.overrides = overrides;
    p.run.windowSlices = [-2, -1, 0, 1, 2].map((k) => ({ elements: rate * (1 + k * 0.005), seconds: 1 }));
    p.run.seconds = 1;
    p.run.elements = rate;
    return p;
  };
  return { run, calls };
}

const REFUSED =
  'Nothing after the source can be converted: fetch is not one loop over its input that yields each element once (a map) or when a test holds (a filter): its loop changes `seen`, declared outside it, so one element’s result depends on those before it, so it stays a generator.';

function refuseConvert(asked: PlanChange[]): (c: PlanChange) => Promise<string | undefined> {
  return async (c) => {
    asked.push(c);
    return c.kind === 'convert' ? REFUSED : undefined;
  };
}

function notOffered(notes: string[] | undefined): string[] {
  return (notes ?? []).filter((n) => n.startsWith('Convert to plumber-data not offered: '));
}

describe('diagnose: a conversion the source does not allow', () => {
  it('is dropped before any run with its reason, not run and failed by verification', async () => {
    const first = inDialect(oneFetchProfile(), 'async-generator', []);
    const s = scriptedRuns(first);
    const asked: PlanChange[] = [];
    const d = await diagnose({ run: s.run, unoffered: refuseConvert(asked), verifyBudgetSeconds: 60 });
    assert.ok(
      asked.some((c) => c.kind === 'convert'),
      'the model proposes the conversion this test needs',
    );
    assert.equal(
      s.calls.some((c) => c.convert),
      false,
      'no run of the conversion',
    );
    assert.ok(!d.plan.changes.some((c) => c.kind === 'convert'));
    assert.deepEqual(notOffered(d.plan.notes), [`Convert to plumber-data not offered: ${REFUSED}`]);
    assert.ok(!(d.plan.verification?.dropped ?? []).some((x) => x.change.kind === 'convert'));
    assert.doesNotMatch(d.plan.verification?.summary ?? '', /failed/);
  });

  it('is verified as before when the source allows it (the check above can tell)', async () => {
    const first = inDialect(oneFetchProfile(), 'async-generator', []);
    const s = scriptedRuns(first);
    const d = await diagnose({ run: s.run, unoffered: async () => undefined, verifyBudgetSeconds: 60 });
    assert.ok(s.calls.some((c) => c.purpose === 'verify' && c.convert));
    assert.deepEqual(notOffered(d.plan.notes), []);
  });

  it('leaves the plan’s other changes to verification', async () => {
    // An async source read one element at a time and a heavy exported map: Node streams can
    // buffer after the source, only plumber-data can also move the map.
    const base = new ProfileBuilder({ cores: 4 }).op({ kind: 'from', wait: 2e-3 }).map('augment', { self: 4e-3, module: true }).build({ rootElements: 500, rate: 160 });
    const first = inDialect(base, 'node-streams', ['prefetch']);
    const s = scriptedRuns(first);
    const d = await diagnose({ run: s.run, unoffered: refuseConvert([]), verifyBudgetSeconds: 60 });
    assert.equal(
      s.calls.some((c) => c.convert),
      false,
    );
    assert.ok(
      s.calls.some((c) => c.purpose === 'verify'),
      'the prefetch is verified',
    );
    assert.deepEqual(
      d.plan.changes.map((c) => c.kind),
      ['prefetch'],
    );
    assert.equal(d.plan.verification?.verdict, 'gain');
    assert.equal(notOffered(d.plan.notes).length, 1);
  });

  it('is asked of the real rewrite by the front door, which reads the refusal from the source without starting a run', async () => {
    const file = '/project/src/rows.ts';
    const text = GENERATORS.replace('export const rows = pairs(evens(scored(readRows(40))));', 'export const rows = pairs(readRows(40));');
    const pipeline = readChain(file, text, 'rows', 'async-generator');
    let reason: string | undefined;
    let spawned = 0;
    await diagnoseFile({
      file,
      runs: { seconds: 1 },
      convertSource: { graphOf: (f) => ({ file: f, moduleKind: 'cjs', pipelines: [pipeline], typed: false }), textOf: () => text },
      graphs: { graphOf: (f) => ({ file: f, moduleKind: 'cjs', pipelines: [], typed: false }), importedFiles: () => [] },
      spawn: async () => {
        spawned++;
        throw new Error('no run expected');
      },
      diagnose: async (input) => {
        reason = await input.unoffered?.(convertOf(pipeline, 'async-generator', []));
        assert.equal(await input.unoffered?.({ kind: 'prefetch', opId: pipeline.rootId, existing: false, size: 2, reason: 'r' }), undefined);
        return {} as never;
      },
    });
    assert.equal(spawned, 0);
    assert.match(reason ?? '', /^Nothing after the source can be converted: pairs is not one loop over its input .*: its body is not one `for await` loop over src and nothing else/);
  });
});
