/**
 * After the measured window: what moving each sampled main-thread map/filter/flatMap to worker
 * threads would cost, and whether its fn is deterministic, measured on the real input elements
 * the tracer kept: on the main thread (sync.ts; async fns awaited one call at a time in
 * awaited.ts, which also measures the CPU they spend after their first await), then in a worker
 * thread (workerTimes.ts). The fn is called a few extra times here (twice per sampled element for
 * the determinism check, then repeatedly for its CPU time), so side effects in a fn happen again.
 * Where a repeat reads an op's output again, what its results hold on the heap is measured too
 * (heap.ts), for the size of a cache after it.
 */
import { estimateBytes } from '../../data/tracing';
import { diskCacheCost, diskCacheStartCost } from '../diskCost';
import { heapBytesPerElement } from '../heap';
import { measureAwaited } from './awaited';
import { measureMain } from './sync';
import type { MoveFindings, MoveTarget } from './types';
import { timeInWorker, type WorkerJob } from './workerTimes';

export type { MoveFindings, MoveTarget } from './types';

/**
 * Measures every target within about `budgetSeconds` of fn time (main thread, then worker; a
 * worker's start and module load get `loadSeconds` more). Returns findings by operator id; an
 * operator whose fn could not be measured is left out. The worker thread is ended before this
 * returns.
 */
export async function measureMoves(targets: MoveTarget[], budgetSeconds = 0.6, loadSeconds = 6): Promise<Map<string, MoveFindings>> {
  const out = new Map<string, MoveFindings>();
  const live = targets.filter((t) => t.samples.length > 0);
  if (live.length === 0) return out;
  // Less for the main thread, whose fn is already hot, than for the worker, which must warm up.
  const share = budgetSeconds * 1000 * 0.4;
  const workerShare = budgetSeconds * 1000 * 0.6;
  const forWorker: WorkerJob[] = [];
  const forHeap: { handed: unknown[]; findings: MoveFindings; diskCost?: boolean }[] = [];
  const start = performance.now();
  for (let i = 0; i < live.length; i++) {
    const t = live[i];
    const left = share - (performance.now() - start);
    const deadline = performance.now() + Math.max(1, left / (live.length - i));
    const main = t.async ? await measureAwaited(t, deadline) : measureMain(t, deadline);
    if (main === undefined) continue;
    out.set(t.id, main.findings);
    if (t.heap && main.handed !== undefined) forHeap.push({ handed: main.handed, findings: main.findings, ...(t.diskCost ? { diskCost: true } : {}) });
    // The timer worker calls fns synchronously: an async fn's worker CPU is left unmeasured (the
    // model then takes its main-thread figure). Nor is a fn timed there that costs the main thread
    // no more than cloning its element in and its result out: moved, it would leave the main thread
    // more work than it takes off, whatever it costs in a worker, and such fns rarely settle in a
    // worker's rounds, taking the time a dearer fn after them needs.
    const cost = main.findings.moveCost;
    const couldPay = cost !== undefined && cost.mainCpuSeconds > cost.cloneInSeconds + cost.cloneOutSeconds;
    if (!t.async && t.fnModule !== undefined && couldPay && main.inputs.length > 0) forWorker.push({ t, inputs: main.inputs, findings: main.findings });
  }
  await measureHeld(forHeap);
  if (forWorker.length > 0) await timeInWorker(forWorker, workerShare / 1000, loadSeconds);
  return out;
}

/**
 * What the elements each op handed on hold on the heap, in one series of readings (each a pair of
 * full collections): outside the CPU timings, whose windows a collection would distort.
 */
async function measureHeld(forHeap: { handed: unknown[]; findings: MoveFindings; diskCost?: boolean }[]): Promise<void> {
  heapBytesPerElement(forHeap.map((h) => h.handed)).forEach((heapBytes, i) => {
    const { handed, findings } = forHeap[i]!;
    if (heapBytes === undefined) return;
    let size = 0;
    for (const x of handed) size += estimateBytes(x);
    findings.held = { heapBytes, sizeBytes: Math.round(size / handed.length) };
  });
  // What a disk cache after the op would pay per element, where a repeat reads its output again.
  for (const { handed, findings, diskCost } of forHeap) {
    if (!diskCost) continue;
    // Cold first: the timing rounds after it warm the same code.
    const start = await diskCacheStartCost(handed[0]);
    const cost = diskCacheCost(handed);
    if (cost !== undefined) findings.diskCacheCost = start !== undefined ? { ...cost, ...start } : cost;
  }
}
