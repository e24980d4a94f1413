/**
 * The paused-consumer scenario's consumer (bench:cluster -- --faults), a process of its own so
 * that the benchmark can stop it: maps range(n) with fortyMs on the cluster, prints `started`
 * after 50 elements, then one line of JSON: the elements delivered, in order, or the error.
 */
import { connect, range } from '../../src/data/index';
import { fortyMs } from './faulty';

const [url, name, n] = process.argv.slice(2);
const out: number[] = [];
async function main(): Promise<void> {
  const cluster = connect({ redis: url, name });
  for await (const x of range(Number(n)).map(fortyMs, { placement: cluster, parallelism: 16 })) {
    out.push(x);
    if (out.length === 50) process.stdout.write('started\n');
  }
  process.stdout.write(`${JSON.stringify({ out })}\n`);
}
main().catch((e: unknown) => process.stdout.write(`${JSON.stringify({ out, error: e instanceof Error ? e.message : String(e) })}\n`));
