/**
 * One measured read for bench:formats, in a process of its own: a warm-up pass, then passes over
 * every shard until `seconds` have gone by; prints `{"rows":…,"seconds":…,"cpuSeconds":…,"mainCpuSeconds":…,"passes":…}`
 * (the process's CPU over the measured passes, all threads, and the main thread's alone). `calibrate` reads one thread with a
 * tracer installed and adds the reader's counters (`counters`: seconds waiting for bytes,
 * decompressing and parsing), which say whether the read is CPU-bound as the model says it.
 *
 *   node --import tsx bench/formats/run.ts READER plumber|hand|parallel|calibrate SECONDS PARALLELISM PLACEMENT SHARD…
 */
import { cpuClockKind, threadCpuSeconds } from '../../src/data/internal/cpuclock';
import { newCounters, READER_KINDS, TRACER_KEY, type OpCounters, type Tracer } from '../../src/data/tracing';
import { READERS, type Knobs } from './loops';

/** A tracer that keeps the readers' counters, installed before the library builds a reader. */
function installTracer(): OpCounters[] {
  const kept: OpCounters[] = [];
  const tracer: Tracer = {
    register(info) {
      const c = newCounters();
      if (READER_KINDS.has(info.kind)) kept.push(c);
      return c;
    },
  };
  (globalThis as Record<symbol, unknown>)[TRACER_KEY] = tracer;
  return kept;
}

async function pass(reader: (typeof READERS)[number], mode: string, shards: string[], knobs: Knobs): Promise<number> {
  const source = mode === 'hand' ? reader.hand(shards) : await reader.plumber(shards, knobs);
  let n = 0;
  for await (const row of source) if (row !== undefined) n++;
  return n;
}

async function main(): Promise<void> {
  const [name, mode, seconds, parallelism, placement, ...shards] = process.argv.slice(2);
  const reader = READERS.find((r) => r.name === name);
  if (!reader) throw new Error(`no reader called ${String(name)}`);
  const knobs: Knobs = mode === 'parallel' ? { parallelism: Number(parallelism), placement: placement === 'worker' ? 'worker' : 'main' } : { parallelism: 1, placement: 'main' };
  const traced = mode === 'calibrate' ? installTracer() : undefined;
  await pass(reader, mode!, shards, knobs);
  const cpu0 = process.cpuUsage();
  const main0 = threadCpuSeconds();
  const t0 = performance.now();
  let rows = 0;
  let passes = 0;
  do {
    rows += await pass(reader, mode!, shards, knobs);
    passes++;
  } while ((performance.now() - t0) / 1000 < Number(seconds));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  // Where no clock sees one thread (it would be wall time), the main thread's CPU is not reported.
  const mainCpuSeconds = cpuClockKind() === 'wall' ? undefined : threadCpuSeconds() - main0;
  const sum = (k: 'ioWaitSeconds' | 'decompressSeconds' | 'parseSeconds'): number => (traced ?? []).reduce((a, c) => a + (c[k] ?? 0), 0);
  const counters = traced ? { ioWaitSeconds: sum('ioWaitSeconds'), decompressSeconds: sum('decompressSeconds'), parseSeconds: sum('parseSeconds') } : undefined;
  process.stdout.write(`${JSON.stringify({ rows, seconds: wall, cpuSeconds: (cpu.user + cpu.system) / 1e6, mainCpuSeconds, passes, ...(counters ? { counters } : {}) })}\n`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
