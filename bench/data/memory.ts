/**
 * B5, bounded memory: 1e6 elements of 1 KB stream through prefetch(n) or a parallel map; the peak
 * of heap + array-buffer memory must not grow with the stream, only with n and parallelism.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { from } from 'plumber-data';

// A forced GC shows what the pipeline keeps alive, apart from garbage not yet collected.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export const ELEMENTS = 1_000_000;

function* kilobytes(): Generator<Uint8Array> {
  for (let i = 0; i < ELEMENTS; i++) {
    const a = new Uint8Array(1024);
    a[0] = i & 0xff;
    a[1023] = 1;
    yield a;
  }
}

function used(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

export interface MemoryResult {
  /** Peak heap + array buffers over the stream, MB. */
  peakHeapMB: number;
  /** Peak in the first 10% of the stream, MB: a flat stream peaks early. */
  earlyPeakMB: number;
  /** Peak in the last half minus peak in the first half, MB (≈ 0 when flat). */
  growthMB: number;
  /** Largest memory still alive after a forced GC, sampled ten times along the stream, MB. */
  peakLiveMB: number;
}

export type MemoryCase = 'prefetch-16' | 'prefetch-1024' | 'asyncMap-p16' | 'asyncMap-p256';

/** Streams the elements through the case's pipeline, sampling memory every 4096 elements. */
export async function memoryCase(name: MemoryCase): Promise<MemoryResult> {
  const src = from(kilobytes);
  const ds = name === 'prefetch-16' ? src.prefetch(16) : name === 'prefetch-1024' ? src.prefetch(1024) : src.map(async (a) => a, { parallelism: name === 'asyncMap-p16' ? 16 : 256 }).prefetch(4);
  gc();
  const base = used();
  let live = 0;
  let firstHalf = 0;
  let secondHalf = 0;
  let early = 0;
  let i = 0;
  let check = 0;
  for await (const a of ds) {
    check += a[0];
    if (++i % (ELEMENTS / 10) === 0) {
      gc();
      live = Math.max(live, used() - base);
    }
    if ((i & 4095) === 0) {
      const u = used() - base;
      if (i < ELEMENTS / 10) early = Math.max(early, u);
      if (i < ELEMENTS / 2) firstHalf = Math.max(firstHalf, u);
      else secondHalf = Math.max(secondHalf, u);
    }
  }
  if (i !== ELEMENTS || check <= 0) throw new Error(`memory case ${name} consumed ${i} elements`);
  const mb = (b: number): number => b / 2 ** 20;
  return { peakHeapMB: mb(Math.max(firstHalf, secondHalf)), earlyPeakMB: mb(early), growthMB: mb(secondHalf - firstHalf), peakLiveMB: mb(live) };
}
