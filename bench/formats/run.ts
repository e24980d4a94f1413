/**
 * One measured read for bench:formats, in a process of its own: a warm-up pass, then passes over
 * every shard until `seconds` have gone by; prints `{"rows":…,"seconds":…,"cpuSeconds":…,"passes":…}`
 * (the process's CPU over the measured passes, all threads, so a CPU-bound read shows it).
 *
 *   node --import tsx bench/formats/run.ts READER plumber|hand|parallel SECONDS PARALLELISM PLACEMENT SHARD…
 */
import { READERS, type Knobs } from './loops';

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
  await pass(reader, mode!, shards, knobs);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let rows = 0;
  let passes = 0;
  do {
    rows += await pass(reader, mode!, shards, knobs);
    passes++;
  } while ((performance.now() - t0) / 1000 < Number(seconds));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(`${JSON.stringify({ rows, seconds: wall, cpuSeconds: (cpu.user + cpu.system) / 1e6, passes })}\n`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
