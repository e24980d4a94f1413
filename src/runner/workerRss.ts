/**
 * What a worker thread running one fn costs the process in resident bytes, measured in two parts
 * by the timer worker (moves/timerWorker.ts), which loads and runs the fn as a pool's thread would:
 *
 * - the thread with its module loaded: the process's resident set once the fn's module is loaded,
 *   less the process (garbage collected) before the runner started the thread (the main thread
 *   waits meanwhile, so the growth is the thread's: with the runner's loader flags, as the
 *   library's pool starts its threads, tsx's hooks included);
 * - its garbage between collections: the largest growth of the thread's V8 heap while the fn runs,
 *   read at most every READ_EVERY_MS (garbage rises and falls between collections: readings
 *   spread over the run find its top). Array buffers are left out: the pool transfers the buffers
 *   a result carries to the main thread, where they are the main thread's (its working memory),
 *   whereas the timer worker drops every result where it made it.
 */
import * as v8 from 'node:v8';
import { gc } from './heap';

/** Milliseconds between readings while a fn runs: a reading costs a few µs, a fn's round can cost less. */
const READ_EVERY_MS = 4;

/** What the timer worker reports of one fn: the process's resident set with the fn loaded, and its heap's growth at most while it ran. */
export interface ThreadMemory {
  loadedRssBytes: number;
  heapGrowthBytes: number;
}

/**
 * Reads a thread's memory while its fn runs: `loaded()` once the fn is loaded, before its calls;
 * `poll()` between calls; `report()` at the end. `rss`, `heap` and `now` are injectable for tests.
 */
export class ThreadMemoryReader {
  private loadedRss = 0;
  private heapStart = 0;
  private heapPeak = 0;
  private last = -Infinity;

  constructor(
    private readonly rss: () => number = () => process.memoryUsage.rss(),
    private readonly heap: () => number = () => v8.getHeapStatistics().used_heap_size,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Once the fn is loaded (and a fn timed before it in the thread collected), before its calls. */
  loaded(): void {
    // What earlier fns in this thread left is garbage: collected, it is not counted as this fn's.
    gc()?.();
    this.loadedRss = this.rss();
    this.heapStart = this.heapPeak = this.heap();
    this.last = this.now();
  }

  poll(): void {
    const t = this.now();
    if (t - this.last < READ_EVERY_MS) return;
    this.last = t;
    this.heapPeak = Math.max(this.heapPeak, this.heap());
  }

  report(): ThreadMemory {
    this.last = -Infinity;
    this.poll();
    return { loadedRssBytes: this.loadedRss, heapGrowthBytes: Math.max(0, this.heapPeak - this.heapStart) };
  }
}

/**
 * Bytes one thread running the fn adds to the process: its resident growth with the fn loaded,
 * from `before` (the process before the thread started), plus its heap's growth while the fn ran.
 * Undefined when either is unknown.
 */
export function threadBytes(before: number | undefined, m: Partial<ThreadMemory> | undefined): number | undefined {
  if (before === undefined || m === undefined) return undefined;
  const { loadedRssBytes: rss, heapGrowthBytes: heap } = m;
  if (typeof rss !== 'number' || typeof heap !== 'number' || !Number.isFinite(rss) || !Number.isFinite(heap) || rss <= 0) return undefined;
  return Math.max(0, rss - before) + Math.max(0, heap);
}
