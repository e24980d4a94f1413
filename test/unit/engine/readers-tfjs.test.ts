/**
 * tfjs-data's `tf.data.csv(url, csvConfig)` converts to plumber-data's `csv(path, { header,
 * delimiter, schema })` with tfjs's element shape (`{ xs, ys }` with a label column), the plan's
 * reader knobs written as its options; a config whose values a typed column cannot repeat is
 * refused with the reason.
 */
import * as assert from 'node:assert/strict';
import type { PlanChange } from '../../../src/shared/analysis';
import { convertPipeline, type ConvertOutcome } from '../../../src/engine/convert';
import type { PipelineGraph } from '../../../src/engine/graph/types';
import { readLiteral } from '../../../src/engine/convert/literal';
import { convertOf, opOf, readChain } from './convertGraph';

const FILE = '/project/src/pipeline.ts';

function convert(text: string, then: (p: PipelineGraph) => PlanChange[] = () => []): ConvertOutcome {
  const pipeline = readChain(FILE, text, 'ds', 'tfjs-data');
  return convertPipeline({ pipeline, change: convertOf(pipeline, 'tfjs-data', then(pipeline)), text, moduleKind: 'esm' });
}

function converted(text: string, then?: (p: PipelineGraph) => PlanChange[]): string {
  const out = convert(text, then);
  assert.ok(out.ok, out.ok ? '' : out.reason);
  return out.text;
}

function refusal(text: string): string {
  const out = convert(text);
  assert.equal(out.ok, false, 'expected a refusal');
  return out.ok ? '' : out.reason;
}

const HEAD = `import * as tf from '@tensorflow/tfjs';\n`;
const LABELLED = `{ columnConfigs: { x: { dtype: 'float32' }, n: { dtype: 'int32' }, ok: { dtype: 'bool' }, y: { dtype: 'float32', isLabel: true } }, configuredColumnsOnly: true }`;

describe('convert: tf.data.csv to csv', () => {
  it('reads typed columns as a schema and builds tfjs’s { xs, ys } with the label in ys', () => {
    const text = `${HEAD}export const ds = tf.data.csv('file://./rows.csv', ${LABELLED}).shuffle(100).batch(8);\n`;
    assert.equal(
      converted(text),
      `${HEAD}import { csv, toTfDataset } from 'plumber-data';\nexport const ds = toTfDataset(csv('./rows.csv', { header: true, schema: { x: 'number', n: 'number', ok: 'string', y: 'number' } }).map((row) => ({ xs: { x: row.x, n: Math.floor(Number(row.n)), ok: String(row.ok) === '1' || String(row.ok).toLowerCase() === 'true' ? 1 : 0 }, ys: { y: row.y } })).shuffle(100), tf).batch(8);\n`,
    );
  });

  it('names the columns with columnNames, skips the header row tfjs skips, and keeps the delimiter', () => {
    const text = `${HEAD}export const ds = tf.data.csv('https://data.example/rows.csv', { columnNames: ['a', 'b c'], delimiter: ';', columnConfigs: { a: { dtype: 'float32' }, 'b c': { dtype: 'int32' } } }).take(5);\n`;
    assert.match(
      converted(text),
      /csv\('https:\/\/data\.example\/rows\.csv', \{ header: \['a', 'b c'\], delimiter: ';', schema: \{ a: 'number', 'b c': 'number' \} \}\)\.skip\(1\)\.map\(\(row\) => \(\{ a: row\.a, 'b c': Math\.floor\(Number\(row\['b c'\]\)\) \}\)\)\.take\(5\)/,
    );
  });

  it('writes the plan’s shards at once and worker placement as the reader’s options', () => {
    const text = `${HEAD}export const ds = tf.data.csv('file:///data/rows.csv.gz', ${LABELLED}).take(10);\n`;
    const out = converted(text, (p) => [{ kind: 'placement', opId: opOf(p, 'csv('), to: 'worker', parallelism: 2, reason: 'r' }]);
    assert.match(out, /csv\('\/data\/rows\.csv\.gz', \{ header: true, schema: \{[^}]*\}, parallelism: 2, placement: 'worker' \}\)\.map/);
  });

  it('says what differs unseen: empty fields and malformed numbers', () => {
    const out = convert(`${HEAD}export const ds = tf.data.csv('file://rows.csv', ${LABELLED}).take(1);\n`);
    assert.ok(out.ok);
    assert.ok(out.notes.some((n) => /An empty field reads as NaN/.test(n)));
  });

  it('refuses columns without a dtype, a string dtype, defaults, whitespace splitting and a config it cannot read', () => {
    assert.match(refusal(`${HEAD}export const ds = tf.data.csv('file://r.csv', { columnConfigs: { y: { isLabel: true } } }).take(1);\n`), /a column without a dtype/);
    assert.match(refusal(`${HEAD}export const ds = tf.data.csv('file://r.csv', { columnConfigs: { s: { dtype: 'string' } }, configuredColumnsOnly: true }).take(1);\n`), /column s has dtype string/);
    assert.match(refusal(`${HEAD}export const ds = tf.data.csv('file://r.csv', { columnConfigs: { s: { dtype: 'float32', default: 0 } }, configuredColumnsOnly: true }).take(1);\n`), /column s has a default/);
    assert.match(refusal(`${HEAD}export const ds = tf.data.csv('file://r.csv', { delimWhitespace: true }).take(1);\n`), /delimWhitespace/);
    assert.match(refusal(`${HEAD}export const ds = tf.data.csv('file://r.csv', config).take(1);\n`), /not written as a literal object/);
    assert.match(refusal(`${HEAD}export const ds = tf.data.csv(url, ${LABELLED}).take(1);\n`), /not given its URL as a string literal/);
  });

  it('reads literals without evaluating anything', () => {
    assert.deepEqual(readLiteral(`{ a: [1, -2.5e3, 'x\\'y'], "b": { c: true, d: null }, e: undefined, }`), { value: { a: [1, -2500, "x'y"], b: { c: true, d: null }, e: undefined } });
    assert.deepEqual(readLiteral('{ a: f() }'), { unreadable: true });
    assert.deepEqual(readLiteral('{ ...x }'), { unreadable: true });
    assert.deepEqual(readLiteral('`${x}`'), { unreadable: true });
  });
});
