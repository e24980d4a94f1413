/**
 * A `pipeline()` whose last stage is a Transform, converted to plumber-data: the real runner names
 * the Transform stage by its class (found exported, so the model can plan moving it), the
 * conversion type-checks and yields what Node's streams yield, and its Transform work runs in
 * worker threads under the real runner. A Transform that keeps state across chunks, flushes, or
 * takes bytes is not converted, and the reason says why.
 */
import * as assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { convertInGraph, type ConvertChange } from '../../../src/engine/convert';
import type { PipelineGraph } from '../../../src/engine/graph/types';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import { runProfile } from '../../../src/runner/spawn';
import { scratchProject, typeCheck } from './convertRun';

const STEPS = `import { Transform, type TransformCallback } from 'node:stream';

/** Integer work per element (JIT-stable: int32 arithmetic only). */
export function spin(x: number, n: number): number {
  let h = x | 0;
  for (let i = 0; i < n; i++) h = (Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) + i) | 0;
  return h;
}

/** A pure per-chunk Transform: one line in, its score out, and a second element for every tenth. */
export class Score extends Transform {
  constructor() {
    super({ objectMode: true });
  }
  override _transform(line: string, _encoding: BufferEncoding, callback: TransformCallback): void {
    const x = Number(line);
    if (x % 10 === 0) this.push({ x, tenth: true });
    callback(null, { x, score: spin(x, 20_000) });
  }
}

/** Numbers the chunks it sees: state from one chunk to the next. */
export class Tally extends Transform {
  private count = 0;
  constructor() {
    super({ objectMode: true });
  }
  override _transform(line: string, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.count++;
    callback(null, { line, n: this.count });
  }
}

/** Emits a total when its input ends. */
export class Summed extends Transform {
  constructor() {
    super({ objectMode: true });
  }
  override _transform(line: string, _encoding: BufferEncoding, callback: TransformCallback): void {
    callback(null, Number(line));
  }
  override _flush(callback: TransformCallback): void {
    callback(null, -1);
  }
}

/** A byte-stream Transform: Node hands it Buffers. */
export class Upper extends Transform {
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    callback(null, chunk.toString().toUpperCase());
  }
}
`;

const PIPE = `import { Readable, Transform, pipeline } from 'node:stream';
import { Score, Summed, Tally, Upper, spin } from './steps';

function* lines(n: number): Generator<string> {
  for (let i = 0; i < n; i++) yield String(i);
}

async function* trimmed(src: AsyncIterable<string>): AsyncGenerator<string> {
  for await (const line of src) yield line.trim();
}

export function scored(): Score {
  return pipeline(
    Readable.from(lines(400)),
    trimmed,
    new Score(),
    () => {},
  );
}

export function tripled(): Readable {
  return pipeline(
    Readable.from(lines(300)),
    new Transform({
      objectMode: true,
      transform(line: string, _encoding, callback) {
        callback(null, spin(Number(line), 5_000) * 3);
      },
    }),
    () => {},
  );
}

export function scaled(): Readable {
  const factor = 3;
  return pipeline(
    Readable.from(lines(50)),
    new Transform({
      objectMode: true,
      transform(line: string, _encoding, callback) {
        callback(null, Number(line) * factor);
      },
    }),
    () => {},
  );
}

export function tallied(): Tally {
  return pipeline(Readable.from(lines(50)), trimmed, new Tally(), () => {});
}

export function summed(): Summed {
  return pipeline(Readable.from(lines(50)), trimmed, new Summed(), () => {});
}

export function upper(): Upper {
  return pipeline(Readable.from(lines(50)), trimmed, new Upper(), () => {});
}
`;

/** The chain exported as `name` in the graph of `file`. */
function chainOf(file: string, text: string, name: string): PipelineGraph {
  const ws = new GraphWorkspace();
  ws.setText(file, text);
  const p = ws.graphOf(file).pipelines.find((x) => x.name === name);
  assert.ok(p, `the graph found no ${name}`);
  return p;
}

/** The conversion the plan would ask for: the root (the Transform) moved to 2 worker threads. */
function convert(file: string, text: string, name: string): ReturnType<typeof convertInGraph> {
  const ws = new GraphWorkspace();
  ws.setText(file, text);
  const graph = ws.graphOf(file);
  const p = chainOf(file, text, name);
  const change: ConvertChange = {
    kind: 'convert',
    opId: p.rootId,
    from: 'node-streams',
    opIds: p.ops.map((o) => o.id),
    then: [{ kind: 'placement', opId: p.rootId, to: 'worker', parallelism: 2, reason: 'r' }],
    reason: 'r',
    predictedRate: 1,
  };
  return convertInGraph(graph, text, change);
}

async function drain(source: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const x of source) out.push(x);
  return out;
}

describe('convert a pipeline() Transform stage to plumber-data (real streams, real runner)', function () {
  this.timeout(180_000);
  let root: string;
  let pipe: string;

  before(() => {
    root = scratchProject('transform-cases', ['ES2022']);
    writeFileSync(path.join(root, 'steps.ts'), STEPS);
    pipe = path.join(root, 'pipe.ts');
    writeFileSync(pipe, PIPE);
    for (const name of ['scored', 'tripled']) {
      const out = convert(pipe, PIPE, name);
      assert.ok(out.ok, out.ok ? '' : out.reason);
      writeFileSync(path.join(root, `${name}-converted.ts`), out.text);
    }
  });

  after(() => rmSync(root, { recursive: true, force: true }));

  it('profiles the Transform stage under its class, found exported where the run can import it', async () => {
    // Where the graph saw pipeline()'s arguments, as diagnoseFile hands them to the runner.
    const argSites = chainOf(pipe, PIPE, 'scored').argSites ?? [];
    assert.ok(argSites.length > 0, 'the graph located no pipeline() arguments');
    const p = await runProfile({ file: pipe, exportName: 'scored', seconds: 0.5, warmupSeconds: 0.1, probes: false, argSites });
    assert.equal(p.error, undefined, p.error?.message);
    const stage = p.ops.find((o) => o.id === p.pipeline.rootId);
    assert.ok(stage, 'no root operator');
    assert.equal(stage.fnName, 'Score');
    assert.deepEqual(stage.fnModule, { file: path.join(root, 'steps.ts'), exportName: 'Score' });
  });

  it('type-checks the converted files, the pipeline() call keeping its other stages and its callback', () => {
    const out = convert(pipe, PIPE, 'scored');
    assert.ok(out.ok);
    assert.match(
      out.text,
      /from\(\(\) => pipeline\(\s*Readable\.from\(lines\(400\)\),\s*trimmed,\s*\(\) => \{\},\s*\) as unknown as AsyncIterable<unknown>\)\.flatMap\(scoreChunk, \{ parallelism: 2, placement: 'worker', module: __filename \}\)/,
    );
    assert.match(out.text, /export function scored\(\): Readable \{/);
    typeCheck(root);
  });

  for (const name of ['scored', 'tripled']) {
    it(`yields what Node's streams yield, in order (${name})`, async () => {
      const original = (await import(pipe)) as Record<string, () => AsyncIterable<unknown>>;
      const converted = (await import(path.join(root, `${name}-converted.ts`))) as Record<string, () => AsyncIterable<unknown>>;
      const want = await drain(original[name]!());
      assert.ok(want.length > 0);
      assert.deepEqual(await drain(converted[name]!()), want);
    });
  }

  it("runs the Transform's work in worker threads under the real runner", async () => {
    const p = await runProfile({ file: path.join(root, 'scored-converted.ts'), exportName: 'scored', seconds: 0.5, warmupSeconds: 0.2, probes: false });
    assert.equal(p.error, undefined, p.error?.message);
    const moved = p.ops.filter((o) => o.kind === 'flatMap' && o.placement === 'worker');
    assert.equal(moved.length, 1, JSON.stringify(p.ops.map((o) => [o.id, o.kind, o.placement])));
    assert.ok(moved[0]!.counters.calls > 0 && moved[0]!.counters.workerCpuSeconds > 0, JSON.stringify(moved[0]!.counters));
  });

  it('does not move a Transform that keeps state across chunks, flushes, takes bytes, or reads a local, and says why', () => {
    const reasons = Object.fromEntries(['tallied', 'summed', 'upper', 'scaled'].map((name) => [name, convert(pipe, PIPE, name)]));
    for (const [name, out] of Object.entries(reasons)) assert.equal(out.ok, false, `${name} was converted`);
    const why = (name: string): string => (reasons[name]!.ok ? '' : (reasons[name] as { reason: string }).reason);
    assert.match(why('tallied'), /keeps state from one chunk to the next \(`this\.count`\)/);
    assert.match(why('summed'), /has a flush/);
    assert.match(why('upper'), /not in object mode/);
    assert.match(why('scaled'), /reads `factor` from the function it is made in/);
  });
});
