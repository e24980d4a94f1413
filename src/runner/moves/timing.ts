/**
 * How a fn's CPU per call is timed, alike on the main thread (sync.ts) and in the worker thread
 * that times it as a worker pool would run it (timerWorker.ts), and the messages between that
 * worker and the runner (workerTimes.ts).
 *
 * CPU is read with `process.cpuUsage()` (precise, where the per-thread schedstat clock advances
 * only at scheduler ticks), while no other thread of ours works: the pipeline is closed, and the
 * main thread waits while the worker thread measures.
 */
import type { Marks } from '../../data/tracing';
import type { ThreadMemory } from '../workerRss';
import { processCpuSeconds, threadRunAndWait } from '../machine';

/** CPU seconds a timing loop aims for, so a clock step of a few µs stays a small error. */
export const TARGET_CPU_SECONDS = 0.01;
/** Timing windows per measurement: their median ignores a window that a GC pause or a preemption's cache misses hit. */
export const WINDOWS = 5;
/** Milliseconds of CPU in each warm-up round of the timer worker: a fifteenth of its time, within these. */
export const WARM_ROUND_MIN_MS = 2;
export const WARM_ROUND_MAX_MS = 10;
/**
 * In the timer worker, wall time counts as a WALL_PER_CPU-th as much CPU: a call that waits (a
 * sync read of a slow disk) burns no CPU, and must still use up the time it is given. Time the
 * thread spends waiting for a core (other work holds them) is not a wait of the fn's: it does not
 * count, where the kernel says how long it was (`threadRunAndWait`, machine.ts).
 */
export const WALL_PER_CPU = 3;
/**
 * All wall time counts as a MAX_WALL_PER_CPU-th as much CPU: a thread that gets less than that
 * share of a core still ends its time, so the runner's profile ends.
 */
export const MAX_WALL_PER_CPU = 10;

/**
 * Seconds of time used from now on, read by the function returned: the CPU the process gets; wall
 * time, less the thread's waits for a core, at a WALL_PER_CPU-th (for calls that wait); and all
 * wall time at a MAX_WALL_PER_CPU-th, whichever is the most.
 */
export function usedFromNow(): () => number {
  const c0 = processCpuSeconds();
  const w0 = performance.now();
  const q0 = threadRunAndWait()?.wait;
  // The wait read last: it only grows, so a stale one over-counts the wall, and is read again only
  // when the wall would count the most (a read is a system call; a cheap fn's round is less).
  let waited = 0;
  return () => {
    const cpuSeconds = processCpuSeconds() - c0;
    const wall = (performance.now() - w0) / 1000;
    if (q0 !== undefined && (wall - waited) / WALL_PER_CPU > cpuSeconds) waited = (threadRunAndWait()?.wait ?? q0) - q0;
    return Math.max(cpuSeconds, (wall - waited) / WALL_PER_CPU, wall / MAX_WALL_PER_CPU);
  };
}

/**
 * CPU seconds per element of `round()` (which handles `n` elements): the median over WINDOWS
 * windows of at least TARGET_CPU_SECONDS ÷ WINDOWS each, fewer once `more()` says stop (at least
 * one).
 */
export function cpuPerElementWhile(n: number, round: () => void, more: () => boolean): number {
  const perElement: number[] = [];
  do {
    let rounds = 0;
    const c0 = processCpuSeconds();
    let c = c0;
    do {
      round();
      rounds++;
      c = processCpuSeconds();
    } while (c - c0 < TARGET_CPU_SECONDS / WINDOWS && more());
    perElement.push(Math.max(0, c - c0) / (rounds * n));
  } while (perElement.length < WINDOWS && more());
  return median(perElement);
}

/** `cpuPerElementWhile` until `deadline` (performance.now() ms) passes. */
export function cpuPerElement(n: number, round: () => void, deadline: number): number {
  return cpuPerElementWhile(n, round, () => performance.now() < deadline);
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** What the runner asks the timer worker: time `exportName` of `file` on these inputs for about `seconds` of CPU. */
export interface TimerRequest {
  file: string;
  exportName: string;
  /** The sampled inputs as a worker of the library is sent them (see `sentToWorker`). */
  inputs: unknown[];
  /** Where each input holds what the library rebuilds after the clone (its crossing.ts), or null. */
  marks: (Marks | null)[];
  /** The values of the number arrays among the inputs (crossing.ts `Encoded.numbers`). */
  numbers?: Float64Array;
  /** Each input's index in its op's input: its context's `index`. */
  indices: number[];
  /** Each input's generator seed: its context's `rng`. */
  seeds: number[];
  seconds: number;
}

/**
 * The timer worker's answer, with the CPU seconds it used (`seconds`): the fn's CPU per call;
 * `unsettled` when its warm-up ran out of time before the calls stopped getting cheaper; or the
 * error that stopped it; with what the thread held (workerRss.ts).
 */
export type TimerReply = ({ cpuPerCall: number; seconds: number } | { unsettled: true; seconds: number } | { error: string }) & {
  /** What the thread held with the fn loaded, and its heap's growth while the fn ran (workerRss.ts). */
  memory?: ThreadMemory;
};
