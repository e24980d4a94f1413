/**
 * "Convert to plumber-data": the exact rewritten text of each dialect form with the plan's knobs,
 * the refusals with their reasons, and the rest of the file kept byte for byte.
 */
import * as assert from 'node:assert/strict';
import type { PlanChange } from '../../../src/shared/analysis';
import { convertPipeline, type ConvertOutcome } from '../../../src/engine/convert';
import type { Dialect, PipelineGraph } from '../../../src/engine/graph/types';
import { AWAITING, convertOf, GENERATORS, opOf, readChain, STREAMS, TFJS } from './convertGraph';

const FILE = '/project/src/pipeline.ts';

function convert(text: string, name: string, dialect: Dialect, then: (p: PipelineGraph) => PlanChange[] = () => [], moduleKind: 'esm' | 'cjs' = 'cjs'): ConvertOutcome {
  const pipeline = readChain(FILE, text, name, dialect);
  return convertPipeline({ pipeline, change: convertOf(pipeline, dialect, then(pipeline)), text, moduleKind });
}

function reasonOf(outcome: ConvertOutcome): string {
  assert.equal(outcome.ok, false, 'expected a refusal');
  return outcome.ok ? '' : outcome.reason;
}

describe('convert to plumber-data', () => {
  describe('tfjs-data', () => {
    it('rewrites the chain up to its batch, moves the map to worker threads and hands the rest a tfjs Dataset', () => {
      const out = convert(TFJS, 'digits', 'tfjs-data', (p) => [{ kind: 'placement', opId: opOf(p, 'map(decode'), to: 'worker', parallelism: 2, reason: 'r' }]);
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.equal(
        out.text,
        TFJS.replace(`import * as tfd from '@tensorflow/tfjs-data';`, `import * as tfd from '@tensorflow/tfjs-data';\nimport { from, toTfDataset } from 'plumber-data';`).replace(
          `tf.data
  .array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
  .map(decode)
  .filter((x) => x % 2 === 0)
  .prefetch(2)
  .batch(2);`,
          `toTfDataset(from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
  .map(decode, { parallelism: 2, placement: 'worker', module: __filename })
  .filter((x) => x % 2 === 0)
  .prefetch(2), tf)
  .batch(2);`,
        ),
      );
      assert.equal(out.converted.length, 4);
      assert.ok(out.notes.some((n) => /batch.*stacks elements into tensors/.test(n)));
      assert.ok(out.notes.some((n) => /tf\.tidy/.test(n)));
    });

    it('turns a sequential mapAsync into a map with the calls in flight the plan asks for, and a generator source into from(g)', () => {
      const text = `import * as tf from '@tensorflow/tfjs';\n\nexport const ds = tf.data.generator(rows).mapAsync(fetchRow).prefetch(4);\n`;
      const out = convert(text, 'ds', 'tfjs-data', (p) => [
        { kind: 'parallelism', opId: opOf(p, 'mapAsync'), from: 1, to: 8, reason: 'r' },
        { kind: 'prefetch', opId: opOf(p, 'prefetch'), existing: true, from: 4, size: 16, reason: 'r' },
      ]);
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.equal(
        out.text,
        `import * as tf from '@tensorflow/tfjs';\nimport { from, toTfDataset } from 'plumber-data';\n\nexport const ds = toTfDataset(from(rows).map(fetchRow, { parallelism: 8 }).prefetch(16), tf);\n`,
      );
    });

    it('writes a require in a CommonJS file and a cache after the operator the plan names', () => {
      const text = `const tf = require('@tensorflow/tfjs');\n\nexports.ds = null;\nconst ds = tf.data.array(xs).map(parse).repeat(3);\n`;
      const out = convert(text, 'ds', 'tfjs-data', (p) => [{ kind: 'cache', opId: opOf(p, 'map(parse'), estimatedBytes: 1000, reason: 'r' }]);
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.equal(out.text, `const tf = require('@tensorflow/tfjs');\nconst { from, toTfDataset } = require('plumber-data');\n\nexports.ds = null;\nconst ds = toTfDataset(from(xs).map(parse).cache().repeat(3), tf);\n`);
    });

    it('refuses a chain whose first operator is a seeded shuffle: the order it fixes is tfjs generator’s', () => {
      const text = `import * as tf from '@tensorflow/tfjs';\nexport const ds = tf.data.array(xs).shuffle(100, 'seed').map(parse);\n`;
      assert.match(reasonOf(convert(text, 'ds', 'tfjs-data')), /Nothing after the source can be converted: shuffle\(100\) is seeded/);
    });

    it('keeps an unseeded shuffle, random in both libraries', () => {
      const text = `import * as tf from '@tensorflow/tfjs';\nexport const ds = tf.data.array(xs).shuffle(100).map(parse);\n`;
      const out = convert(text, 'ds', 'tfjs-data');
      assert.ok(out.ok);
      assert.match(out.text, /toTfDataset\(from\(xs\)\.shuffle\(100\)\.map\(parse\), tf\)/);
    });

    it('refuses a csv source whose columns have no dtype, which tfjs reads as numbers or text value by value', () => {
      const text = `import * as tf from '@tensorflow/tfjs';\nexport const ds = tf.data.csv('file://rows.csv').map(parse);\n`;
      assert.match(reasonOf(convert(text, 'ds', 'tfjs-data')), /a column without a dtype as a number or as text, value by value/);
    });

    it('refuses to move a fn to worker threads when it uses module state a worker would not share', () => {
      const text = `import * as tf from '@tensorflow/tfjs';\nlet seen = 0;\nexport function count(x: number): number {\n  seen++;\n  return x + seen;\n}\nexport const ds = tf.data.array(xs).map(count);\n`;
      const reason = reasonOf(convert(text, 'ds', 'tfjs-data', (p) => [{ kind: 'placement', opId: opOf(p, 'map(count'), to: 'worker', parallelism: 2, reason: 'r' }]));
      assert.match(reason, /uses the module's mutable `seen`, and each worker thread would hold its own copy of it/);
    });

    it('refuses to move an inline fn to worker threads, saying how to make it importable', () => {
      const text = `import * as tf from '@tensorflow/tfjs';\nexport const ds = tf.data.array(xs).map((x) => x * 2);\n`;
      assert.match(reasonOf(convert(text, 'ds', 'tfjs-data', (p) => [{ kind: 'placement', opId: opOf(p, 'map('), to: 'worker', parallelism: 2, reason: 'r' }])), /inline/);
    });

    it('exports a top-level fn a worker must import, and keeps an ES module’s import.meta.url', () => {
      const text = `import * as tf from '@tensorflow/tfjs';\nfunction heavy(x: number): number {\n  return x * 2;\n}\nexport const ds = tf.data.array(xs).map(heavy);\n`;
      const out = convert(text, 'ds', 'tfjs-data', (p) => [{ kind: 'placement', opId: opOf(p, 'map(heavy'), to: 'worker', parallelism: 3, reason: 'r' }], 'esm');
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.equal(
        out.text,
        `import * as tf from '@tensorflow/tfjs';\nimport { from, toTfDataset } from 'plumber-data';\nexport function heavy(x: number): number {\n  return x * 2;\n}\nexport const ds = toTfDataset(from(xs).map(heavy, { parallelism: 3, placement: 'worker', module: import.meta.url }), tf);\n`,
      );
    });

    it('refuses when the file already declares a `from` of its own', () => {
      const text = `import * as tf from '@tensorflow/tfjs';\nimport { from } from 'rxjs';\nexport const ds = tf.data.array(xs).map(parse);\n`;
      assert.match(reasonOf(convert(text, 'ds', 'tfjs-data')), /already declares a `from`/);
    });
  });

  describe('Node streams', () => {
    it('rewrites Readable.from(src) operators into a dataset that consumers still receive as a Readable, concurrency as parallelism', () => {
      const out = convert(STREAMS, 'items', 'node-streams', (p) => [{ kind: 'parallelism', opId: opOf(p, 'map(lookup'), from: 1, to: 4, reason: 'r' }]);
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.equal(
        out.text,
        STREAMS.replace(`import { Readable } from 'node:stream';`, `import { Readable } from 'node:stream';\nimport { from } from 'plumber-data';`).replace(
          'Readable.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).map(lookup, { concurrency: 1 }).filter((x) => x.id % 3 !== 0).take(5)',
          'Readable.from(from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).map(lookup, { parallelism: 4 }).filter((x) => x.id % 3 !== 0).take(5))',
        ),
      );
    });

    it('starts the dataset lazily when worker threads import the pipeline’s own module, which Readable.from would otherwise start in each of them', () => {
      const text = `import { Readable } from 'node:stream';\nexport function heavy(x: number): number {\n  return x * 2;\n}\nexport const s = Readable.from(rows).map(heavy);\n`;
      const out = convert(text, 's', 'node-streams', (p) => [{ kind: 'placement', opId: opOf(p, 'map(heavy'), to: 'worker', parallelism: 2, reason: 'r' }]);
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.match(out.text, /export const s = Readable\.from\(\(async function\* \(\) \{ yield\* from\(rows\)\.map\(heavy, \{ parallelism: 2, placement: 'worker', module: __filename \}\); \}\)\(\)\);/);
    });

    it('maps drop to skip and keeps a concurrency written as a variable', () => {
      const text = `import * as stream from 'node:stream';\nexport const s = stream.Readable.from(rows()).drop(1).map(parse, { concurrency: n, highWaterMark: 8 });\n`;
      const out = convert(text, 's', 'node-streams');
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.match(out.text, /export const s = stream\.Readable\.from\(from\(rows\(\)\)\.skip\(1\)\.map\(parse, \{ parallelism: n \}\)\);/);
    });

    it('stops before a stage whose fn reads Node’s { signal }, leaving it a Node operator on the converted Readable', () => {
      const text = `import { Readable } from 'node:stream';\nexport const s = Readable.from(rows).map(parse).map(async (x, { signal }) => fetchIt(x, signal));\n`;
      const out = convert(text, 's', 'node-streams');
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.match(out.text, /export const s = Readable\.from\(from\(rows\)\.map\(parse\)\)\.map\(async \(x, \{ signal \}\) => fetchIt\(x, signal\)\);/);
      assert.ok(out.notes.some((n) => /reads a second argument \(Node's `\{ signal \}`\)/.test(n)));
    });

    it('stops before a Transform whose flush emits, saying why', () => {
      const text = `import { Readable, Transform } from 'node:stream';\nexport const s = Readable.from(rows).map(parse).pipe(new Transform({ objectMode: true, transform(x, _e, cb) { cb(null, x); }, flush(cb) { cb(null, 'end'); } }));\n`;
      const out = convert(text, 's', 'node-streams');
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.match(out.text, /export const s = Readable\.from\(from\(rows\)\.map\(parse\)\)\.pipe\(new Transform/);
      assert.ok(out.notes.some((n) => /is a Transform whose flush can emit after its input ends/.test(n)));
    });

    it('refuses a chain written across files', () => {
      const text = `import { Readable } from 'node:stream';\nexport const s = Readable.from(rows).map(parse);\n`;
      const pipeline = readChain(FILE, text, 's', 'node-streams');
      pipeline.ops[1]!.file = '/project/src/other.ts';
      const out = convertPipeline({ pipeline, change: convertOf(pipeline, 'node-streams', []), text, moduleKind: 'cjs' });
      assert.match(reasonOf(out), /is written in another file; only a chain written in one file is converted/);
    });

    it('refuses a map cancelled by a signal, a string source and a stream that is not Readable.from', () => {
      const signal = `import { Readable } from 'node:stream';\nexport const s = Readable.from(rows).map(parse, { signal: ac.signal });\n`;
      assert.match(reasonOf(convert(signal, 's', 'node-streams')), /has the option `signal`, which plumber-data does not take/);
      const str = `import { Readable } from 'node:stream';\nexport const s = Readable.from('abc').map(parse);\n`;
      assert.match(reasonOf(convert(str, 's', 'node-streams')), /reads a string, which Node yields as one chunk/);
      const file = `import * as fs from 'node:fs';\nexport const s = fs.createReadStream('x').map(parse);\n`;
      assert.match(reasonOf(convert(file, 's', 'node-streams')), /only operator chains on Readable\.from are converted/);
    });
  });

  describe('async generators', () => {
    it('turns map and filter stages into plumber-data operators, moves the map to worker threads, and hands the next generator an async generator that starts it lazily', () => {
      const out = convert(GENERATORS, 'rows', 'async-generator', (p) => [{ kind: 'placement', opId: opOf(p, 'scored'), to: 'worker', parallelism: 2, reason: 'r' }]);
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.equal(
        out.text,
        `import { from } from 'plumber-data';\n${GENERATORS.replace(
          'export const rows = pairs(evens(scored(readRows(40))));',
          "export const rows = pairs((async function* () { yield* from(readRows(40)).map(score, { parallelism: 2, placement: 'worker', module: __filename }).filter((x) => x % 2 === 0); })());",
        )}`,
      );
      assert.ok(out.notes.some((n) => /pairs is not one loop over its input that yields each element once/.test(n)));
    });

    it('refuses a stage that does more than yield once per element', () => {
      const text = GENERATORS.replace('for await (const x of src) yield score(x);', 'for await (const x of src) {\n    yield score(x); console.log(x);\n  }');
      assert.match(reasonOf(convert(text, 'rows', 'async-generator')), /Nothing after the source can be converted: scored is not one loop over its input/);
    });

    it('refuses a chain whose first stage keeps state across elements', () => {
      const text = GENERATORS.replace('export const rows = pairs(evens(scored(readRows(40))));', 'export const rows = pairs(readRows(40));');
      assert.match(reasonOf(convert(text, 'rows', 'async-generator')), /Nothing after the source can be converted: pairs is not one loop over its input/);
    });

    it('turns a loop that awaits and then yields once per element into an async map with the calls in flight the plan asks for', () => {
      const out = convert(AWAITING, 'records', 'async-generator', (p) => [{ kind: 'parallelism', opId: opOf(p, 'fetchAll'), from: 1, to: 18, reason: 'r' }]);
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.equal(
        out.text,
        `import { from } from 'plumber-data';\n${AWAITING.replace(
          'export const records = tag(fetchAll(read(40)));',
          `export const records = (async function* () { yield* from(read(40)).map(async (id) => {
  await new Promise((r) => setTimeout(r, (id * 7) % 5));
  return { id };
}, { parallelism: 18 }).map((r) => ({ ...r, tag: \`r\${r.id}\` })); })();`,
        )}`,
      );
      assert.equal(out.converted.length, 3);
    });

    it('reads past return type annotations whose braces are not the body (AsyncGenerator<{ id: number }>, an object type)', () => {
      const typed = AWAITING.replace('async function* fetchAll(src: AsyncIterable<number>) {', 'async function* fetchAll(src: AsyncIterable<number>): AsyncGenerator<{ id: number }, void, (x: number) => void> {').replace(
        'async function* tag(src: AsyncIterable<{ id: number }>) {',
        'async function* tag(src: AsyncIterable<{ id: number }>): { [Symbol.asyncIterator](): AsyncIterator<{ id: number; tag: string }> } & AsyncGenerator {',
      );
      const out = convert(typed, 'records', 'async-generator', (p) => [{ kind: 'parallelism', opId: opOf(p, 'fetchAll'), from: 1, to: 18, reason: 'r' }]);
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.ok(out.text.includes('from(read(40)).map(async (id) => {'), out.text);
      assert.ok(out.text.includes('.map((r) => ({ ...r, tag: `r${r.id}` }))'), out.text);
    });

    it('turns a loop of statements that never awaits into a sync map', () => {
      const text = AWAITING.replace('await new Promise((r) => setTimeout(r, (id * 7) % 5));', 'const half: number = id / 2;').replace('yield { id };', 'yield { id: half * 2 };');
      const out = convert(text, 'records', 'async-generator');
      assert.ok(out.ok, out.ok ? '' : out.reason);
      assert.ok(out.text.includes('from(read(40)).map((id) => {\n  const half: number = id / 2;\n  return { id: half * 2 };\n}).map((r) =>'), out.text);
    });

    const LOOP = 'for await (const id of src) {\n    await new Promise((r) => setTimeout(r, (id * 7) % 5));\n    yield { id };\n  }';
    const refusals: Array<[string, string, RegExp]> = [
      [
        'state declared before the loop',
        `let n = 0;\n  ${LOOP.replace('yield { id };', 'n++;\n    yield { id, n };')}`,
        /fetchAll is not one loop over its input .*: its body is not one `for await` loop over src and nothing else/,
      ],
      ['a write to module state', LOOP.replace('yield { id };', 'total += id;\n    yield { id };'), /its loop changes `total`, declared outside it/],
      ['a mutating call on module state', LOOP.replace('yield { id };', 'seen.push(id);\n    yield { id };'), /its loop changes `seen`, declared outside it/],
      ['two yields', LOOP.replace('yield { id };', 'yield { id };\n    yield { id: -id };'), /its loop yields more than once per element/],
      ['work after the yield', LOOP.replace('yield { id };', 'yield { id };\n    console.log(id);'), /its yield is not its last statement/],
      ['a yield under a condition', LOOP.replace('yield { id };', 'if (id > 3)\n      yield { id };'), /its one yield is under a condition or an inner loop/],
      ['a break', LOOP.replace('yield { id };', 'if (id > 30) break;\n    yield { id };'), /its loop has a `break`/],
      ['a read of the input inside the loop', LOOP.replace('yield { id };', 'const next = src;\n    yield { id, next };'), /its loop reads its input `src` itself/],
      ['try/finally around the loop', `try {\n    ${LOOP}\n  } finally {\n    console.log('done');\n  }`, /its body is not one `for await` loop over src and nothing else/],
      ['work after the loop', `${LOOP}\n  console.log('done');`, /it does work after its loop/],
    ];
    for (const [what, body, reason] of refusals) {
      it(`refuses a loop with ${what}, saying why, and converts nothing after the source`, () => {
        const text = `let total = 0;\nconst seen: number[] = [];\n${AWAITING.replace(LOOP, body)}`;
        assert.ok(text.includes(body));
        const why = reasonOf(convert(text, 'records', 'async-generator'));
        assert.match(why, /^Nothing after the source can be converted: /);
        assert.match(why, reason);
      });
    }

    it('refuses to move a stage fn to worker threads when it uses module state a worker would not share', () => {
      const text = GENERATORS.replace('export function score(x: number): number {\n  let h = x;', 'let calls = 0;\nexport function score(x: number): number {\n  calls++;\n  let h = x;');
      const reason = reasonOf(convert(text, 'rows', 'async-generator', (p) => [{ kind: 'placement', opId: opOf(p, 'scored'), to: 'worker', parallelism: 2, reason: 'r' }]));
      assert.match(reason, /uses the module's mutable `calls`/);
    });
  });
});
