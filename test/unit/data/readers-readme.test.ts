/**
 * The "Readers" examples of src/data/README.md, run on the files they name, made by real tools
 * (Python's csv module, gzip) in a fresh directory that the example runs in. They are fenced
 * ```typescript (readme.test.ts runs the ```ts ones, which need no files).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from 'esbuild';
import * as lib from 'plumber-data';
import { gzipFile, tempDir, writeCsvWithPython } from './readers-files';

const README = join(__dirname, '../../../src/data/README.md');

/** The ```typescript blocks of the Readers section, with the `// → ` lines each must print. */
function examples(): { code: string; expected: string[] }[] {
  const text = readFileSync(README, 'utf8');
  const section = text.slice(text.indexOf('### Readers'), text.indexOf('\n### ', text.indexOf('### Readers') + 1));
  const out: { code: string; expected: string[] }[] = [];
  const fence = /^```typescript\n([\s\S]*?)^```$/gm;
  for (let m = fence.exec(section); m !== null; m = fence.exec(section)) {
    const expected = m[1]
      .split('\n')
      .filter((l) => l.startsWith('// → '))
      .map((l) => l.slice('// → '.length));
    out.push({ code: m[1], expected });
  }
  return out;
}

async function run(code: string): Promise<string[]> {
  const printed: string[] = [];
  const body = code.replace(/^import \{([^}]*)\} from 'plumber-data';$/gm, (_m, names: string) => `const {${names}} = lib;`);
  assert.doesNotMatch(body, /^import /m);
  const js = transformSync(`async function example(lib, console) {\n${body}\n}`, { loader: 'ts' }).code;
  const example = new Function(`${js}\nreturn example;`)() as (l: typeof lib, c: Pick<Console, 'log'>) => Promise<void>;
  await example(lib, { log: (...args: unknown[]) => void printed.push(args.map(String).join(' ')) });
  return printed;
}

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

  const all = examples();
  it('has a checked example for each reader', () => {
    for (const reader of ['csv', 'jsonLines', 'tfrecord', 'webdataset'])
      assert.ok(
        all.some((e) => new RegExp(`\\b${reader}[<(]`).test(e.code) && e.expected.length > 0),
        `no checked example of ${reader}`,
      );
  });
  for (const [i, ex] of all.entries()) {
    it(`prints what Readers example ${i + 1} says`, async () => {
      assert.deepEqual(await run(ex.code), ex.expected);
    });
  }
});
