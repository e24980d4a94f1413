/**
 * A convert change is verified like any plan: its runs run the converted program (no overrides of
 * the operators it replaces), alternating with runs as written, and it is kept only when it
 * measured faster; the converted file exists beside the pipeline for its run only.
 */
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { diagnoseFile, type FrontDoorRunRequest, type RunBudget, type RunPurpose } from '../../../src/engine/diagnose';
import { verifyPlan } from '../../../src/engine/diagnose/verify';
import { siblingOf, type ConvertSource } from '../../../src/engine/convert/sibling';
import type { ConvertChange } from '../../../src/engine/convert';
import { failedProfile } from '../../../src/runner/emptyProfile';
import { plan as modelPlan } from '../../../src/model';
import type { Overrides, Profile } from '../../../src/shared/profile';
import { oneFetchProfile } from './diagnose/scripted';
import { convertOf, opOf, readChain, STREAMS } from './convertGraph';

interface Call {
  purpose: RunPurpose;
  convert: boolean;
  overrides: Overrides;
}

/** Runs measuring `first`'s rate as written and `factor` × it converted, five windows within ±1%. */
function scriptedConvert(first: Profile, factor: number) {
  const calls: Call[] = [];
  const run = async (overrides: Overrides, purpose: RunPurpose, budget?: RunBudget): Promise<Profile> => {
    calls.push({ purpose, convert: budget?.convert !== undefined, overrides });
    const rate = (first.run.elements / first.run.seconds) * (budget?.convert ? factor : 1);
    const p = structuredClone(first);
    p.run.windowSlices = [-2, -1, 0, 1, 2].map((k) => ({ elements: rate * (1 + k * 0.005), seconds: 1 }));
    p.run.seconds = 1;
    p.run.elements = rate;
    return p;
  };
  return { run, calls };
}

async function verifyConvert(factor: number) {
  const first = oneFetchProfile();
  const rootId = first.pipeline.rootId;
  const fetch = first.ops.find((o) => o.kind === 'map')!.id;
  const convert: ConvertChange = { kind: 'convert', opId: rootId, from: 'node-streams', opIds: first.ops.map((o) => o.id), then: [{ kind: 'parallelism', opId: fetch, from: 1, to: 8, reason: 'r' }], reason: 'r' };
  const rate = first.run.elements / first.run.seconds;
  const plan = { ...modelPlan(first), changes: [convert], predictedRate: 4 * rate, currentRate: rate };
  const s = scriptedConvert(first, factor);
  let now = 0;
  const clock = (): number => (now += 1);
  const verified = await verifyPlan({
    input: { run: s.run, verifyBudgetSeconds: 60 },
    first,
    plan,
    options: {},
    profiles: [first],
    clock,
    passRuns: [{ overrides: {}, profile: first, seconds: 1 }],
    began: 0,
    last: first,
    history: [],
  });
  return { verified, calls: s.calls, convert };
}

describe('convert to plumber-data: verification', () => {
  it('keeps a conversion measured faster than as written, from runs of the converted program alternating with runs as written', async () => {
    const { verified, calls, convert } = await verifyConvert(3);
    assert.equal(verified.verification?.verdict, 'gain');
    assert.deepEqual(verified.changes, [convert]);
    assert.ok(verified.verification!.speedup > 2.5);
    // A B B A after the first run as written: converted, converted, as written.
    assert.deepEqual(
      calls.map((c) => c.convert),
      [true, true, false],
    );
    assert.ok(calls.every((c) => c.purpose === 'verify' && Object.keys(c.overrides).length === 0));
  });

  it('drops a conversion that measured no faster', async () => {
    const { verified } = await verifyConvert(0.9);
    assert.deepEqual(verified.changes, []);
    assert.notEqual(verified.verification?.verdict, 'gain');
  });
});

describe('convert to plumber-data: the converted run', () => {
  let dir: string;
  let file: string;
  let source: ConvertSource;
  let change: ConvertChange;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'plumber-convert-run-'));
    file = path.join(dir, 'items.ts');
    writeFileSync(file, STREAMS);
    const pipeline = readChain(file, STREAMS, 'items', 'node-streams');
    change = convertOf(pipeline, 'node-streams', [{ kind: 'parallelism', opId: opOf(pipeline, 'map(lookup'), from: 1, to: 4, reason: 'r' }]);
    source = { graphOf: (f) => ({ file: f, moduleKind: 'cjs', pipelines: [pipeline], typed: false }), textOf: (f) => readFileSync(f, 'utf8') };
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Diagnoses `file` with `runs` scripted verification runs of the conversion, through `spawn`; the last run's profile. */
  async function runConverted(spawn: (r: FrontDoorRunRequest) => Promise<Profile>, runs = 1): Promise<Profile> {
    let profile: Profile | undefined;
    await diagnoseFile({
      file,
      runs: { seconds: 1 },
      convertSource: source,
      graphs: { graphOf: (f) => ({ file: f, moduleKind: 'cjs', pipelines: [], typed: false }), importedFiles: () => [] },
      spawn,
      diagnose: async (input) => {
        for (let i = 0; i < runs; i++) profile = await input.run({}, 'verify', { seconds: 1, convert: change });
        return { first: profile, profiles: [profile], last: profile } as never;
      },
    });
    return profile!;
  }

  it('runs the converted file written beside the pipeline, and removes it after', async () => {
    let seen: { file: string; text: string } | undefined;
    await runConverted(async (r) => {
      seen = { file: r.file, text: readFileSync(r.file, 'utf8') };
      return failedProfile(r.file, 'items', {}, { kind: 'empty', message: 'scripted' });
    });
    assert.equal(seen?.file, siblingOf(file));
    assert.equal(path.dirname(seen!.file), dir);
    assert.match(seen!.text, /Readable\.from\(from\(\[1, 2, 3, 4, 5, 6, 7, 8, 9, 10\]\)\.map\(lookup, \{ parallelism: 4 \}\)/);
    assert.equal(existsSync(siblingOf(file)), false);
    assert.equal(readFileSync(file, 'utf8'), STREAMS);
  });

  it('reads the source once for every run of the same conversion', async () => {
    let reads = 0;
    const graphOf = source.graphOf;
    source = { ...source, graphOf: (f) => (reads++, graphOf(f)) };
    const files: string[] = [];
    await runConverted(async (r) => {
      files.push(readFileSync(r.file, 'utf8'));
      return failedProfile(r.file, 'items', {}, { kind: 'empty', message: 'scripted' });
    }, 3);
    assert.equal(reads, 1);
    assert.equal(files.length, 3);
    assert.equal(new Set(files).size, 1);
  });

  it('removes the converted file when the run throws', async () => {
    await assert.rejects(
      runConverted(async () => {
        assert.equal(existsSync(siblingOf(file)), true);
        throw new Error('the runner died');
      }),
      /the runner died/,
    );
    assert.equal(existsSync(siblingOf(file)), false);
  });

  it('does not convert a chain written in a module the running file imports, and says so', async () => {
    change = { ...change, opId: 'lib/items.ts:9:24' };
    const p = await runConverted(async () => assert.fail('nothing to run'));
    assert.match(p.error?.message ?? '', /The chain is written in lib\/items\.ts, which items\.ts imports; a conversion is run only from the pipeline's own module/);
  });

  it('fails the run with the reason when the chain cannot be converted', async () => {
    change = { ...change, opId: '99:1' };
    source = { ...source, graphOf: (f) => ({ file: f, moduleKind: 'cjs', pipelines: [], typed: false }) };
    const p = await runConverted(async () => assert.fail('nothing to run'));
    assert.match(p.error?.message ?? '', /could not be converted to plumber-data: The chain ending at 99:1 is no longer in the source/);
  });
});
