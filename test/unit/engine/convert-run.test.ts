/**
 * Node streams and async generators converted: the files type-check and yield what the originals
 * do (Node's real streams; the generator stage's fn in real worker threads).
 */
import { describeConvertedRuns, type RunCase } from './convertRun';
import { AWAITING, GENERATORS, opOf, STREAMS } from './convertGraph';

/** A CPU-heavy map on a stream, its fn in this module: converted, worker threads import the module itself. */
const HEAVY_STREAM = `import { Readable } from 'node:stream';

export function score(x: number): number {
  let h = x;
  for (let i = 0; i < 2000; i++) h = (h * 31 + i) % 1000003;
  return h;
}

export const scores = Readable.from([5, 4, 3, 2, 1, 0, 9, 8, 7, 6]).map(score).filter((x) => x % 2 === 1);
`;

const CASES: RunCase[] = [
  { name: 'heavy', text: HEAVY_STREAM, exportName: 'scores', dialect: 'node-streams', then: (p) => [{ kind: 'placement', opId: opOf(p, 'map(score'), to: 'worker', parallelism: 2, reason: 'r' }] },
  { name: 'streams', text: STREAMS, exportName: 'items', dialect: 'node-streams', then: (p) => [{ kind: 'parallelism', opId: opOf(p, 'map(lookup'), from: 1, to: 4, reason: 'r' }] },
  // Calls in flight finish out of order (each waits (id * 7) % 5 ms): plumber-data's map hands them on in input order.
  { name: 'awaiting', text: AWAITING, exportName: 'records', dialect: 'async-generator', then: (p) => [{ kind: 'parallelism', opId: opOf(p, 'fetchAll'), from: 1, to: 8, reason: 'r' }] },
  { name: 'generators', text: GENERATORS, exportName: 'rows', dialect: 'async-generator', then: (p) => [{ kind: 'placement', opId: opOf(p, 'scored'), to: 'worker', parallelism: 2, reason: 'r' }] },
];

describeConvertedRuns('convert to plumber-data: converted Node streams and generators run', CASES);
