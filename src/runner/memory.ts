/**
 * What the model needs to project the pipeline's peak memory (src/model/memory.ts), measured in
 * the run: the process's resident bytes before the pipeline holds any element, the largest
 * resident set while it runs, and what one input element of each sampled operator holds on the
 * heap (heap.ts), so every buffer's elements are sized by measurement, not by the byte counters'
 * estimate alone.
 */
import * as v8 from 'node:v8';
import { estimateBytes } from '../data/tracing';
import type { Profile } from '../shared/profile';
import { gc, heapBytesPerElement } from './heap';
import type { RunnerTracer } from './tracer';

/** How often the resident set is read while the pipeline runs: often enough to see a buffer full, cheap (one syscall). */
const RSS_EVERY_MS = 25;

/** How often the resident set is read while it falls after a collection, and how many readings at most (about 0.1 s). */
const SETTLE_EVERY_MS = 5;
const SETTLE_READINGS = 20;
/** A fall smaller than this between two readings is the process's own churn, not pages being returned. */
const SETTLE_BYTES = 64 * 1024;

/** The settled resident set (settledMemory's `rss`). */
export async function settledRss(): Promise<number> {
  return (await settledMemory()).rss;
}

/**
 * Resident bytes (`rss`) after two full garbage collections, where the runtime allows them, once
 * they stop falling, and how much of them is this thread's V8 heap (`heap`, its pages in use by
 * any space). V8 sweeps and returns the pages a collection freed on background threads: after
 * one, the set fell by 15–20 MB within 10 ms, and with a large heap (700 MB) by 30–60 MB after
 * 55–75 ms, so a reading taken at once counts them and a difference from it reads short by as
 * much. The second collection finishes the first one's sweep; the readings after it catch the
 * last pages.
 */
export async function settledMemory(): Promise<{ rss: number; heap: number }> {
  const collect = gc();
  collect?.();
  collect?.();
  let rss = process.memoryUsage.rss();
  const heap = (): number => v8.getHeapStatistics().total_physical_size;
  if (collect === undefined) return { rss, heap: heap() };
  for (let i = 0; i < SETTLE_READINGS; i++) {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_EVERY_MS));
    const now = process.memoryUsage.rss();
    const falling = now < rss - SETTLE_BYTES;
    rss = Math.min(rss, now);
    if (!falling) break;
  }
  return { rss, heap: heap() };
}

/**
 * What the runner's probes left resident that a run without them would not hold: the resident
 * growth from `before` to `after`, less the growth of V8's heap. The probes' garbage grows the
 * young generation (by 11 of 20 MB on the digits example), and the pipeline's own allocation grows
 * it as far, so a run without probes holds those pages at its peak too; what stays outside the
 * heap (exited threads' arenas and stacks, the calibration's modules) it does not.
 */
export function probesLeftBytes(before: { rss: number; heap: number }, after: { rss: number; heap: number }): number {
  return Math.max(0, after.rss - before.rss - Math.max(0, after.heap - before.heap));
}

/**
 * Reads the resident set on a timer until stopped; `stop` returns the largest reading. The timer
 * is unref'd: it never keeps the process alive, and a pipeline that blocks the event loop is read
 * at its next turn (the peak the process reached meanwhile is in `peakRssBytes`).
 */
export function watchRss(): { stop(): number } {
  let peak = process.memoryUsage.rss();
  const read = (): void => {
    peak = Math.max(peak, process.memoryUsage.rss());
  };
  const timer = setInterval(read, RSS_EVERY_MS);
  timer.unref();
  let stopped: number | undefined;
  return {
    stop() {
      if (stopped === undefined) {
        clearInterval(timer);
        read();
        stopped = peak;
      }
      return stopped;
    },
  };
}

/**
 * After the window: what one input element of every operator the tracer sampled holds on the
 * heap, recorded as `inputHeld` on the operator, and what one of the root's elements holds, as its
 * `held` where no probe measured it. Costs one pair of full collections per group.
 */
export function measureInputsHeld(tracer: RunnerTracer, profile: Profile, file: string): void {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const groups: { id: string; values: unknown[]; output?: true }[] = [];
  for (const [key, samples] of tracer.samples()) {
    const id = tracer.idOf(key, file);
    if (!byId.has(id) || samples.length === 0) continue;
    groups.push({ id, values: samples.map((s) => s.element) });
  }
  // The root's own elements (what the runner pulled): its results, where no probe measured them.
  for (const [key, samples] of tracer.outputSamples()) {
    const id = tracer.idOf(key, file);
    if (!byId.has(id) || byId.get(id)!.held !== undefined || samples.length === 0) continue;
    groups.push({ id, values: samples.map((s) => s.element), output: true });
  }
  if (groups.length === 0) return;
  let heap: (number | undefined)[];
  try {
    heap = heapBytesPerElement(groups.map((g) => g.values));
  } catch {
    // Sizing elements is extra: a failure here must not cost the user the profile itself.
    return;
  }
  heap.forEach((heapBytes, i) => {
    const { id, values, output } = groups[i]!;
    if (heapBytes === undefined) return;
    let size = 0;
    for (const v of values) size += estimateBytes(v);
    const held = { heapBytes, sizeBytes: Math.round(size / values.length) };
    if (output) byId.get(id)!.held = held;
    else byId.get(id)!.inputHeld = held;
  });
}
