/** Shared helpers for plumber-data tests: installing a real tracer, and spinning JIT-stable CPU work. */
import assert from 'node:assert/strict';
import { newCounters, OVERRIDES_KEY, PipelineError, TRACER_KEY, type KnobOverride, type OpCounters, type OpInfo, type Tracer } from 'plumber-data';

/** A tracer like the runner's: one counters object per key, every OpInfo kept. */
export class RecordingTracer implements Tracer {
  readonly infos: OpInfo[] = [];
  readonly counters = new Map<string, OpCounters>();
  register(info: OpInfo): OpCounters {
    this.infos.push(info);
    let c = this.counters.get(info.key);
    if (c === undefined) {
      c = newCounters();
      this.counters.set(info.key, c);
    }
    return c;
  }
  /** The one registered op of a kind (fails when there are several or none). */
  only(kind: string): { info: OpInfo; counters: OpCounters } {
    const found = this.infos.filter((i) => i.kind === kind);
    if (found.length !== 1) throw new Error(`expected one ${kind} op, found ${found.length}`);
    return { info: found[0], counters: this.counters.get(found[0].key) as OpCounters };
  }
}

type Globals = { [TRACER_KEY]?: Tracer; [OVERRIDES_KEY]?: Map<string, KnobOverride> };

/** Runs `build` with a tracer (and optional overrides) installed, and removes them afterwards. */
export function traced<T>(build: () => T, overrides?: Map<string, KnobOverride>): { tracer: RecordingTracer; value: T } {
  const g = globalThis as Globals;
  const tracer = new RecordingTracer();
  g[TRACER_KEY] = tracer;
  if (overrides !== undefined) g[OVERRIDES_KEY] = overrides;
  try {
    return { tracer, value: build() };
  } finally {
    delete g[TRACER_KEY];
    delete g[OVERRIDES_KEY];
  }
}

/** int32 multiply-xor rounds from a small seed: stays optimised (WORKLOADS.md). */
export function spin(seed: number, rounds: number): number {
  let h = seed | 0;
  for (let i = 0; i < rounds; i++) h = Math.imul(h ^ i, 0x01000193) | 0;
  return h;
}

/** Rounds of `spin` that take about `ms` milliseconds on this machine, measured after warm-up. */
export function roundsFor(ms: number): number {
  spin(1, 2_000_000);
  const rounds = 1_000_000;
  // The fastest of a few runs: on a shared machine a run can be preempted, never sped up.
  let took = Infinity;
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    spin(2, rounds);
    took = Math.min(took, performance.now() - t0);
  }
  return Math.max(1000, Math.round((rounds * ms) / took));
}

/** Resources that would keep the process alive after a pipeline stopped. */
export function liveHandles(): string[] {
  return process.getActiveResourcesInfo().filter((r) => r === 'MessagePort' || r === 'Worker' || r === 'Timeout' || r === 'FileHandle');
}

/** Runs `body` with a tracer installed throughout: operators built while the pipeline runs (interleave's inner datasets) register too. */
export async function whileTraced(body: (tracer: RecordingTracer) => Promise<void>): Promise<RecordingTracer> {
  const g = globalThis as Globals;
  const tracer = new RecordingTracer();
  g[TRACER_KEY] = tracer;
  try {
    await body(tracer);
  } finally {
    delete g[TRACER_KEY];
  }
  return tracer;
}

/** The PipelineError a pipeline run rejects with; fails the test when it resolves or rejects with anything else. */
export async function rejection(p: Promise<unknown>): Promise<PipelineError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof PipelineError, `expected a PipelineError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected the pipeline to fail');
}
