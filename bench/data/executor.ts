/**
 * B1, executor overhead: from(1e6 numbers).map(x => x + 1).filter(x => x % 3 !== 0).batch(32),
 * consumed with for await, against the same pipeline hand-written as async generators, in Node
 * streams, and in @tensorflow/tfjs-data (CPU backend). Also the floor: a sync for-loop.
 */
import { Readable, Transform } from 'node:stream';
import { from } from 'plumber-data';
import { median } from './report';

export const N = 1_000_000;
const data = Array.from({ length: N }, (_, i) => i);

export type Impl = 'plumber' | 'asyncGenerator' | 'nodeStreams' | 'tfjsData' | 'syncLoop';

/** One run of the plumber pipeline; returns elements consumed (a check that the work happened). */
export async function runPlumber(n = N): Promise<number> {
  let got = 0;
  const src = n === N ? data : data.slice(0, n);
  for await (const b of from(src)
    .map((x) => x + 1)
    .filter((x) => x % 3 !== 0)
    .batch(32))
    got += b.length;
  return got;
}

async function runAsyncGenerator(): Promise<number> {
  async function* source(): AsyncGenerator<number> {
    for (const x of data) yield x;
  }
  async function* map(it: AsyncIterable<number>): AsyncGenerator<number> {
    for await (const x of it) yield x + 1;
  }
  async function* filter(it: AsyncIterable<number>): AsyncGenerator<number> {
    for await (const x of it) if (x % 3 !== 0) yield x;
  }
  async function* batch(it: AsyncIterable<number>): AsyncGenerator<number[]> {
    let b: number[] = [];
    for await (const x of it) {
      b.push(x);
      if (b.length === 32) {
        yield b;
        b = [];
      }
    }
    if (b.length > 0) yield b;
  }
  let got = 0;
  for await (const b of batch(filter(map(source())))) got += b.length;
  return got;
}

async function runNodeStreams(): Promise<number> {
  let held: number[] = [];
  const batcher = new Transform({
    objectMode: true,
    transform(x: number, _enc, done) {
      held.push(x);
      if (held.length === 32) {
        const b = held;
        held = [];
        done(null, b);
      } else done();
    },
    flush(done) {
      if (held.length > 0) this.push(held);
      done();
    },
  });
  const stream = Readable.from(data)
    .map((x: number) => x + 1)
    .filter((x: number) => x % 3 !== 0)
    .pipe(batcher);
  let got = 0;
  for await (const b of stream as AsyncIterable<number[]>) got += b.length;
  return got;
}

/** tfjs-data stacks each batch into a tensor; fewer elements keep its run short (the rate is per element). */
const TFJS_N = 100_000;
async function runTfjs(): Promise<number> {
  // tfjs greets Node users on stdout, which would break the JSON lines: send it to stderr.
  const log = console.log;
  console.log = (...a: unknown[]) => console.error(...a);
  const tf = await import('@tensorflow/tfjs-core');
  await import('@tensorflow/tfjs-backend-cpu');
  const tfd = await import('@tensorflow/tfjs-data');
  await tf.setBackend('cpu');
  console.log = log;
  const ds = tfd
    .array(data.slice(0, TFJS_N))
    .map((x) => (x as number) + 1)
    .filter((x) => (x as number) % 3 !== 0)
    .batch(32);
  const it = await ds.iterator();
  let got = 0;
  for (;;) {
    const r = await it.next();
    if (r.done) break;
    const t = r.value as unknown as { size: number; dispose(): void };
    got += t.size;
    t.dispose();
  }
  return got;
}

function runSyncLoop(): number {
  let got = 0;
  let b: number[] = [];
  for (const x of data) {
    const y = x + 1;
    if (y % 3 === 0) continue;
    b.push(y);
    if (b.length === 32) {
      got += b.length;
      b = [];
    }
  }
  return got + b.length;
}

const runs: Record<Impl, { run: () => Promise<number> | number; n: number }> = {
  syncLoop: { run: runSyncLoop, n: N },
  plumber: { run: () => runPlumber(), n: N },
  asyncGenerator: { run: runAsyncGenerator, n: N },
  nodeStreams: { run: runNodeStreams, n: N },
  tfjsData: { run: runTfjs, n: TFJS_N },
};

/** Median µs per element over `repeat` runs after one warm-up run. */
export async function measure(impl: Impl, repeat: number): Promise<number> {
  const { run, n } = runs[impl];
  const expected = Math.ceil((n * 2) / 3) - (n % 3 === 2 ? 1 : 0);
  const got = await run();
  if (Math.abs(got - expected) > 1) throw new Error(`${impl} consumed ${got} elements, expected about ${expected}`);
  const times: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  return (median(times) * 1000) / n;
}
