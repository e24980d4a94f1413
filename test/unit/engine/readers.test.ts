/**
 * The graph knows issue 51's readers: each of `csv`, `jsonLines`, `tfrecord`, `webdataset`,
 * `parquet` and `arrow` is a plumber-data source with its call site, its knobs `parallelism` and
 * `placement` with the exact text they span, and where a fix writes new options.
 */
import * as assert from 'node:assert/strict';
import type { FileGraph, GraphOp } from '../../../src/engine/graph/types';
import { graphOf as virtualGraph, spanned } from './virtualGraph';

const graphOf = (lines: string[]): { graph: FileGraph; text: string } => virtualGraph(lines, 'issue51-virtual.ts');

describe('graph: readers', () => {
  const { graph, text } = graphOf([
    "import { csv, jsonLines, tfrecord, webdataset, parquet, arrow, from } from 'plumber-data';",
    "import * as pd from 'plumber-data';",
    "export const rows = csv('data/*.csv.gz', { header: true, parallelism: 4, placement: 'worker' }).batch(32);",
    "export const events = jsonLines('events.jsonl').map((e) => e).prefetch(2);",
    "export const records = tfrecord(['a.tfrecord', 'b.tfrecord'], { decode: 'example' });",
    "export const samples = from(['s0.tar', 's1.tar']).interleave((s) => webdataset(s, { parallelism: 2 }), { cycleLength: 2 });",
    "export const table = parquet('t.parquet', { columns: ['x'], as: 'rows' }).take(10);",
    "export const batches = pd.arrow('t.arrow', { as: 'batches' });",
  ]);
  const pipeline = (name: string) => graph.pipelines.find((p) => p.name === name);
  const first = (name: string): GraphOp => {
    const p = pipeline(name);
    assert.ok(p, `a pipeline named ${name} in ${graph.pipelines.map((x) => x.name).join(', ')}`);
    return p.ops[0]!;
  };

  it('reads each reader as a source of its own kind at the call site of its name', () => {
    assert.deepEqual(
      ['rows', 'events', 'records', 'table', 'batches'].map((n) => first(n).kind),
      ['csv', 'jsonLines', 'tfrecord', 'parquet', 'arrow'],
    );
    const rows = first('rows');
    assert.equal(rows.id, '3:21');
    assert.equal(text.slice(rows.name.start, rows.name.end), 'csv');
    assert.equal(rows.inputs.length, 0);
    assert.equal(rows.label, "csv('data/*.csv.gz')");
    assert.equal(first('batches').id, '8:27');
  });

  it('reads parallelism and placement as knobs with the text they span', () => {
    const rows = first('rows');
    assert.equal(spanned(text, rows.knobs['parallelism']), '4');
    assert.equal(spanned(text, rows.knobs['placement']), "'worker'");
    assert.deepEqual(rows.knobs['parallelism'], { ...rows.knobs['parallelism'], state: 'literal', value: 4 });
    assert.equal(rows.optionKeys?.includes('parallelism'), true);
    assert.equal(rows.optionKeys?.includes('placement'), true);
  });

  it('reads the path a reader is given, a literal when it is written as one', () => {
    const rows = first('rows');
    assert.deepEqual(rows.knobs['path'] && rows.knobs['path'].state === 'literal' ? rows.knobs['path'].value : undefined, 'data/*.csv.gz');
    assert.equal(first('records').knobs['path']?.state, 'expression');
  });

  it('knows where a fix writes options a reader does not have yet', () => {
    const events = first('events');
    assert.equal(events.knobs['parallelism']?.state, 'absent');
    assert.equal(events.options?.state, 'absent');
    const records = first('records');
    assert.equal(records.knobs['placement']?.state, 'absent');
    assert.equal(records.options?.state, 'object');
  });

  it('finds a reader inside the datasets an interleave builds, with its parent', () => {
    const p = pipeline('samples');
    assert.ok(p);
    const wds = p.ops.find((o) => o.kind === 'webdataset');
    assert.ok(wds, `ops: ${p.ops.map((o) => o.kind).join(', ')}`);
    assert.equal(wds.parent, p.ops.find((o) => o.kind === 'interleave')?.id);
    assert.equal(spanned(text, wds.knobs['parallelism']), '2');
  });
});
