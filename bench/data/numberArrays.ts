/**
 * Per-call cost of a fn in a worker thread on arrays of numbers, as plumber-data hands them
 * (arrays of unboxed doubles, sent as Float64Arrays) against a structured clone of the same
 * elements (arrays of boxed numbers: what a worker fn got before). Each round runs both through a
 * real worker map, alternating which goes first; the fn times itself inside the worker.
 *
 *   node --import tsx bench/data/numberArrays.ts [--json] [--rounds N]
 *
 * Prints, per variant, the median over rounds of each round's median ns per call, and the spread
 * (lowest–highest round), then the ratio cloned ÷ handed. Also the crossing itself, both sides on
 * this thread (ns per element): a structured clone, against the library's encode, clone with
 * transfer, and rebuild.
 */
import { join } from 'node:path';
import { from } from 'plumber-data';
import { encodeAll, restoreAll } from '../../src/data/internal/crossing';
import { image } from './numberWork';
import { emit, median, table } from './report';

const args = process.argv.slice(2);
const json = args.includes('--json');
const roundsArg = args[args.indexOf('--rounds') + 1];
const rounds = args.includes('--rounds') && roundsArg !== undefined ? Math.max(3, Number(roundsArg)) : 5;
const MODULE = join(__dirname, 'numberWork.ts');
const ELEMENTS = 300;

type Variant = 'handed' | 'cloned';

/** Median ns per call over the round's elements, less the first fifth (the fn warming up). */
async function round(variant: Variant, images: number[][][]): Promise<number> {
  const out = (await from(images)
    .map((x: number[][]) => x, { placement: 'worker', module: MODULE, exportName: variant, parallelism: 1 })
    .toArray()) as unknown as { ns: number }[];
  return median(out.slice(Math.floor(out.length / 5)).map((r) => r.ns));
}

/** Ns per element of one way across a thread, both sides' work, on this thread. */
function crossing(how: 'clone' | 'library', images: number[][][]): number {
  const t0 = process.hrtime.bigint();
  for (const img of images) {
    if (how === 'clone') structuredClone(img);
    else {
      const sent = encodeAll([img]);
      const { items, numbers } = structuredClone({ items: sent.items, numbers: sent.numbers }, { transfer: sent.transfer });
      restoreAll(items, sent.marks, undefined, { numbers });
    }
  }
  return Number(process.hrtime.bigint() - t0) / images.length;
}

async function main(): Promise<void> {
  const images = [...Array(ELEMENTS).keys()].map(image);
  const ns: Record<Variant, number[]> = { handed: [], cloned: [] };
  const cross: Record<'clone' | 'library', number[]> = { clone: [], library: [] };
  for (let r = 0; r < rounds; r++) {
    const order: Variant[] = r % 2 === 0 ? ['handed', 'cloned'] : ['cloned', 'handed'];
    for (const v of order) ns[v].push(await round(v, images));
    for (const how of r % 2 === 0 ? (['clone', 'library'] as const) : (['library', 'clone'] as const)) cross[how].push(crossing(how, images));
  }
  for (const how of ['clone', 'library'] as const) emit({ bench: 'number-arrays-crossing', how, rounds, nsPerElement: median(cross[how]), lowest: Math.min(...cross[how]), highest: Math.max(...cross[how]) }, json);
  const summary = (v: Variant): { nsPerCall: number; lowest: number; highest: number } => ({ nsPerCall: median(ns[v]), lowest: Math.min(...ns[v]), highest: Math.max(...ns[v]) });
  for (const v of ['cloned', 'handed'] as const) emit({ bench: 'number-arrays', variant: v, rounds, ...summary(v) }, json);
  const ratios = ns.cloned.map((c, i) => c / ns.handed[i]!);
  emit({ bench: 'number-arrays', variant: 'cloned ÷ handed', rounds, ratio: median(ratios), lowest: Math.min(...ratios), highest: Math.max(...ratios) }, json);
  if (!json) process.stdout.write(`${table()}\n`);
}

void main();
