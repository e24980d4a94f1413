/**
 * The "Readers" examples of src/data/README.md, run on the files they name, made by real tools
 * (Python's csv module, gzip) in a fresh directory that the example runs in. They are fenced
 * ```typescript (readme.test.ts runs the ```ts ones, which need no files).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { examples, runExample } from './readme-examples';
import { gzipFile, tempDir, writeCsvWithPython } from './readers-files';

describe('src/data/README.md Readers examples', () => {
  let t: ReturnType<typeof tempDir>;
  const cwd = process.cwd();
  before(() => {
    t = tempDir();
    const data = join(t.dir, 'data');
    mkdirSync(data);
    writeCsvWithPython(join(data, 'people.csv'), [
      ['name', 'age', 'city'],
      ['Ada', '36', 'London, UK'],
      ['Grace "Amazing" Hopper', '85', ''],
    ]);
    gzipFile(join(data, 'people.csv'));
    writeFileSync(join(data, 'events-0.jsonl'), '{"id":0}\n{"id":2}\n');
    writeFileSync(join(data, 'events-1.jsonl'), '{"id":1}\n{"id":3}\n{"id":5}\n');
    // The webdataset example's shard, made by GNU tar (the records helper's lines).
    for (const [key, cls, txt] of [
      ['0001', '3', 'a cat'],
      ['0002', '5', 'a dog'],
    ]) {
      mkdirSync(join(t.dir, 'src', 'train'), { recursive: true });
      writeFileSync(join(t.dir, 'src', 'train', `${key}.cls`), cls);
      writeFileSync(join(t.dir, 'src', 'train', `${key}.txt`), txt);
    }
    mkdirSync(join(t.dir, 'shards'));
    execFileSync('tar', ['-cf', join(t.dir, 'shards', 'train-0000.tar'), '--sort=name', '-C', join(t.dir, 'src'), 'train']);
    process.chdir(t.dir);
  });
  after(() => {
    process.chdir(cwd);
    t.remove();
  });

  const all = examples('### Readers');
  it('has a checked example for each reader', () => {
    for (const reader of ['csv', 'jsonLines', 'tfrecord', 'webdataset'])
      assert.ok(
        all.some((e) => new RegExp(`\\b${reader}[<(]`).test(e.code) && e.expected.length > 0),
        `no checked example of ${reader}`,
      );
  });
  for (const [i, ex] of all.entries()) {
    it(`prints what Readers example ${i + 1} says`, async () => {
      assert.deepEqual(await runExample(ex.code), ex.expected);
    });
  }
});
