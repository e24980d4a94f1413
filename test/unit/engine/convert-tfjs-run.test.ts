/**
 * tfjs-data converted: the file type-checks, and through plumber-data's adapter back to a tfjs
 * Dataset (`toTfDataset`) it yields the same batches in the same order as the original, with the
 * map in real worker threads (the real @tensorflow/tfjs-data, -core and the CPU backend).
 */
import { describeConvertedRuns, type RunCase } from './convertRun';
import { opOf, TFJS } from './convertGraph';

const CASES: RunCase[] = [{ name: 'tfjs', text: TFJS, exportName: 'digits', dialect: 'tfjs-data', then: (p) => [{ kind: 'placement', opId: opOf(p, 'map(decode'), to: 'worker', parallelism: 2, reason: 'r' }] }];

describeConvertedRuns('convert to plumber-data: a converted tfjs-data pipeline runs', CASES);
