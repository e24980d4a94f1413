/**
 * Node streams and async generators converted: the files type-check and yield what the originals
 * do (Node's real streams; the generator stage's fn in real worker threads).
 */
import { describeConvertedRuns, type RunCase } from './convertRun';
import { GENERATORS, opOf, STREAMS } from './convertGraph';

const CASES: RunCase[] = [
  { name: 'streams', text: STREAMS, exportName: 'items', dialect: 'node-streams', then: (p) => [{ kind: 'parallelism', opId: opOf(p, 'map(lookup'), from: 1, to: 4, reason: 'r' }] },
  { name: 'generators', text: GENERATORS, exportName: 'rows', dialect: 'async-generator', then: (p) => [{ kind: 'placement', opId: opOf(p, 'scored'), to: 'worker', parallelism: 2, reason: 'r' }] },
];

describeConvertedRuns('convert to plumber-data: converted Node streams and generators run', CASES);
