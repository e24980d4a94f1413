/**
 * The examples of src/data/README.md, run: every ```ts block with `// → ` lines runs as written (its
 * `import … from 'plumber-data'` bound to the library), and what its `console.log` calls print,
 * line by line, must be the `// → ` lines in order. Like tf.data's doctests.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from 'esbuild';
import * as lib from 'plumber-data';

const README = join(__dirname, '../../../src/data/README.md');

interface Example {
  line: number;
  code: string;
  expected: string[];
}

/** The checked examples: ```ts blocks that say what they print. */
function examples(): Example[] {
  const text = readFileSync(README, 'utf8');
  const out: Example[] = [];
  const fence = /^```ts\n([\s\S]*?)^```$/gm;
  for (let m = fence.exec(text); m !== null; m = fence.exec(text)) {
    const code = m[1];
    const expected = code
      .split('\n')
      .filter((l) => l.startsWith('// → '))
      .map((l) => l.slice('// → '.length));
    if (expected.length > 0) out.push({ line: text.slice(0, m.index).split('\n').length, code, expected });
  }
  return out;
}

/** Runs an example with its imports bound to the library and console.log recorded. */
async function run(code: string): Promise<string[]> {
  const printed: string[] = [];
  const body = code.replace(/^import \{([^}]*)\} from 'plumber-data';$/gm, (_m, names: string) => `const {${names}} = lib;`);
  assert.doesNotMatch(body, /^import /m, 'an example imports something other than plumber-data');
  const js = transformSync(`async function example(lib, console) {\n${body}\n}`, { loader: 'ts' }).code;
  const example = new Function(`${js}\nreturn example;`)() as (l: typeof lib, c: Pick<Console, 'log'>) => Promise<void>;
  await example(lib, { log: (...args: unknown[]) => void printed.push(args.map(String).join(' ')) });
  return printed;
}

describe('src/data/README.md examples', () => {
  const all = examples();
  it('has a checked example for every operator of tf.data it documents', () => {
    const code = all.map((e) => e.code).join('\n');
    for (const op of ['shard', 'enumerate', 'window', 'paddedBatch', 'bucketBySequenceLength', 'groupByWindow', 'rebatch', 'scan', 'reduce', 'sampleFromDatasets', 'chooseFromDatasets', 'ignoreErrors']) {
      assert.match(code, new RegExp(`\\b${op}\\(`), `no checked example uses ${op}`);
    }
  });
  for (const ex of all) {
    it(`prints what README.md line ${ex.line} says`, async () => {
      assert.deepEqual(await run(ex.code), ex.expected);
    });
  }
});
