/**
 * What the model needs to project the pipeline's peak memory (src/model/memory.ts), measured in
 * the run: the process's resident bytes before the pipeline holds any element, the largest
 * resident set while it runs, and what one input element of each sampled operator holds on the
 * heap (heap.ts), so every buffer's elements are sized by measurement, not by the byte counters'
 * estimate alone.
 */
import { estimateBytes } from '../data/tracing';
import type { Profile } from '../shared/profile';
import { gc, heapBytesPerElement } from './heap';
import type { RunnerTracer } from './tracer';

/** How often the resident set is read while the pipeline runs: often enough to see a buffer full, cheap (one syscall). */
const RSS_EVERY_MS = 25;

/** Resident bytes now, after a full garbage collection where the runtime allows one. */
export function settledRss(): number {
  gc()?.();
  return process.memoryUsage.rss();
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
