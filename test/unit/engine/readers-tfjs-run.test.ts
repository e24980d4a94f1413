/**
 * `tf.data.csv` converted to plumber-data's `csv` runs: through the adapter back to a tfjs Dataset
 * it yields the very elements tfjs-data's own csv reader does (the real @tensorflow/tfjs), on a
 * CSV file Python's csv module wrote: typed columns, a label column in `ys`, a quoted field with
 * the delimiter in it, named columns without a header, another delimiter.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describeConvertedRuns, type RunCase } from './convertRun';

const DIR = mkdtempSync(path.join(os.tmpdir(), 'plumber-tfjs-csv-'));
const script = [
  'import csv, random, sys',
  'random.seed(51)',
  "with open(sys.argv[1] + '/rows.csv', 'w', newline='') as f:",
  '    w = csv.writer(f)',
  "    w.writerow(['x', 'n', 'ok', 'name', 'y'])",
  '    for i in range(40):',
  "        w.writerow([round(random.uniform(-50, 50), 3), round(random.uniform(0, 9), 2), random.choice(['true', 'False', '1', '0']), 'a, b' if i % 7 == 0 else 'c', i % 3])",
  "with open(sys.argv[1] + '/semi.csv', 'w', newline='') as f:",
  "    w = csv.writer(f, delimiter=';')",
  '    for i in range(25):',
  '        w.writerow([i, round(random.random(), 4)])',
].join('\n');
execFileSync('python3', ['-c', script, DIR]);

const HEAD = `import * as tf from '@tensorflow/tfjs';\n`;
const CASES: RunCase[] = [
  {
    name: 'labelled',
    text: `${HEAD}export const ds = tf.data.csv('file://${DIR}/rows.csv', { columnConfigs: { x: { dtype: 'float32' }, n: { dtype: 'int32' }, ok: { dtype: 'bool' }, y: { dtype: 'int32', isLabel: true } }, configuredColumnsOnly: true }).take(30);\n`,
    exportName: 'ds',
    dialect: 'tfjs-data',
    then: () => [],
  },
  {
    name: 'named',
    text: `${HEAD}export const ds = tf.data.csv('file://${DIR}/semi.csv', { hasHeader: false, columnNames: ['i', 'v'], delimiter: ';', columnConfigs: { i: { dtype: 'int32' }, v: { dtype: 'float32' } } }).skip(2);\n`,
    exportName: 'ds',
    dialect: 'tfjs-data',
    then: () => [],
  },
];

describeConvertedRuns('convert to plumber-data: a converted tf.data.csv reads the same elements', CASES);
