/**
 * What moving a fn to worker threads costs, from what the runner measured (`op.moveCost`) carried
 * to the window's elements, and how per-call figures travel between runs of the same pipeline.
 */
import type { OpProfile } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';
import { isFnOp } from './knobs';
import type { OpMeasure } from './measured';

/**
 * How much more input a call of `now`'s op took than a call of the same op in an earlier run
 * (`then`): the ratio of their input bytes per element, when both runs measured it, within
 * [1/inputScaleMax, inputScaleMax]; 1 otherwise. Every run starts from the pipeline's first
 * element, and a faster one reaches further into the data, whose elements may differ in size
 * along the way. A per-call cost carried from one run to the other is carried per byte, so the two stretches are
 * compared on the same work. A fn whose inputs are all alike (a fixed-size image, a number) has
 * the same bytes per call in every run, and keeps its figure.
 */
export function inputScale(now: OpMeasure, then: OpMeasure): number {
  const a = now.inputBytesPerElement;
  const b = then.inputBytesPerElement;
  if (!(a > 0 && b > 0 && Number.isFinite(a) && Number.isFinite(b))) return 1;
  return Math.min(C.inputScaleMax, Math.max(1 / C.inputScaleMax, a / b));
}

/**
 * The window's bytes per call ÷ the sample's (both by the library's estimate), or 1 when either is
 * unknown or they agree within C.moveSampleAgreement. A clone's cost grows with what it copies, and
 * a handful of elements sampled from a corpus whose sizes spread over orders of magnitude can
 * average far from its mean: priced at the sample's size, a move can look like a loss.
 */
function bytesRatio(window: number | undefined, sample: number | undefined): number {
  if (!(window !== undefined && sample !== undefined && window > 0 && sample > 0 && Number.isFinite(window) && Number.isFinite(sample))) return 1;
  const r = window / sample;
  return Math.max(r, 1 / r) <= C.moveSampleAgreement ? 1 : r;
}

/**
 * The main-thread time each async fn worked after its first await in the window, and what its
 * calls wait beyond their work, from the runner's awaited calls (`MoveCost.awaitedSeconds`): the
 * library times an async call's sync part (`selfSeconds`) and its whole latency, and the work
 * after an await (a decode after a file read) lands in neither. Per call it is the awaited calls' CPU,
 * carried to the window's elements by bytes as the clones are, less the sync part the window
 * measured. Together they cannot exceed the main-thread CPU no op claimed (`unclaimed`): beyond
 * it they are scaled down, since the window's own clock is the better witness. `works`: the fn's
 * CPU is at least `awaitedWorkShare` of its awaited calls, and it may move to worker threads.
 */
export function awaitedWork(ops: OpProfile[], inputBytesOf: (op: OpProfile) => number | undefined, unclaimed: number): Map<string, { perCall: number; wait: number; works: boolean }> {
  const found = new Map<string, { perCall: number; wait: number; works: boolean }>();
  let total = 0;
  for (const op of ops) {
    const mc = op.moveCost;
    const c = op.counters;
    if (!mc || mc.awaitedSeconds === undefined || op.placement !== 'main' || !isFnOp(op) || c.calls <= 0 || c.asyncCalls <= 0) continue;
    if (!(Number.isFinite(mc.mainCpuSeconds) && mc.mainCpuSeconds >= 0 && Number.isFinite(mc.awaitedSeconds) && mc.awaitedSeconds >= 0)) continue;
    const cpuPerCall = mc.mainCpuSeconds * bytesRatio(inputBytesOf(op), mc.inSizeBytes);
    const perCall = Math.max(0, cpuPerCall - c.selfSeconds / c.calls);
    const works = mc.mainCpuSeconds >= C.awaitedWorkShare * mc.awaitedSeconds;
    found.set(op.id, { perCall, wait: Math.max(0, mc.awaitedSeconds - mc.mainCpuSeconds), works });
    total += perCall * c.calls;
  }
  if (total > unclaimed) for (const v of found.values()) v.perCall *= unclaimed / total;
  return found;
}

/** An async fn's move, with what its awaited calls measured (see `awaitedWork`); none without a measured move. */
export function withAwaited(move: OpMeasure['move'], awaited: { perCall: number; wait: number } | undefined): OpMeasure['move'] {
  if (!move || !awaited) return move;
  return { ...move, awaited: { afterAwait: awaited.perCall, wait: awaited.wait } };
}

/**
 * A measured move cost per call (see `OpMeasure.move`); undefined when absent or unusable. The
 * clones are carried from the sample to the window's elements by their bytes (`bytesRatio`):
 * `inputBytes` is what the op's input produced per element in the window, and the output's bytes
 * per call are the op's own.
 */
export function moveOf(op: OpProfile, inputBytes: number | undefined): OpMeasure['move'] {
  const mc = op.moveCost;
  if (!mc || !(mc.samples > 0)) return undefined;
  const ok = (x: number) => Number.isFinite(x) && x >= 0;
  if (!ok(mc.cloneInSeconds) || !ok(mc.cloneOutSeconds)) return undefined;
  const c = op.counters;
  const inScale = bytesRatio(inputBytes, mc.inSizeBytes);
  // A filter sends back a boolean whatever it was given: nothing to scale.
  const outScale = op.kind === 'filter' ? 1 : bytesRatio(c.calls > 0 ? c.bytesProduced / c.calls : undefined, mc.outSizeBytes);
  const cloneIn = mc.cloneInSeconds * inScale;
  const cloneOut = mc.cloneOutSeconds * outScale;
  let ratio = 1;
  // The worker/main ratio comes from calling the fn on a few samples over and over. It speaks for
  // the pipeline only when those repeated calls cost what the fn cost per call in the window: a fn
  // that caches by input (a tokenizer's word cache) or whose cost depends on the input runs far
  // cheaper on a handful of repeated samples, and the ratio of two such figures is noise. Samples
  // larger than the window's elements are compared per byte (`inScale`): samples n× the mean that
  // cost about n× the mean call are the same work, and what they measured in a worker speaks for it.
  const perCall = op.counters.calls > 0 ? op.counters.selfSeconds / op.counters.calls : undefined;
  const sampleCall = mc.mainCpuSeconds * inScale;
  const representative = perCall !== undefined && perCall > 0 && sampleCall > 0 && Math.max(perCall, sampleCall) / Math.min(perCall, sampleCall) <= C.moveSampleAgreement;
  const probed = mc.workerCpuSeconds !== undefined && ok(mc.workerCpuSeconds) && mc.mainCpuSeconds > 0 ? mc.workerCpuSeconds / mc.mainCpuSeconds : undefined;
  if (representative && probed !== undefined) ratio = Math.min(C.workerCpuRatioMax, Math.max(C.workerCpuRatioMin, probed));
  // Below what the model prices, the probe's figure is a reason to try the move, not a price:
  // even from calls that were not representative (a tokenizer's cached words), a worker that ran
  // them at half the main thread's CPU is worth one run with the move.
  const probeRatio = probed !== undefined && probed < ratio ? probed : undefined;
  const scaled = inScale !== 1 ? inScale : outScale;
  return { cloneIn, cloneOut, ...(scaled !== 1 ? { sizeScale: scaled } : {}), workerCpuRatio: ratio, ...(probeRatio !== undefined ? { probeRatio } : {}) };
}

/**
 * Seconds a moved call's clones cost each side, main thread and worker alike: half of the input's
 * round (serialised on the main thread, deserialised in the worker) plus half of the output's
 * (the other way round).
 */
export function cloneSide(move: NonNullable<OpMeasure['move']>): number {
  return (move.cloneIn + move.cloneOut) / 2;
}
