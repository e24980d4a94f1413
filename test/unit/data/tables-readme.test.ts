/**
 * The "Tables" examples of src/data/README.md, run on the files they name: Parquet written by
 * arrow-rs (parquet-wasm) in a fresh directory the examples run in. They are fenced ```typescript
 * (readme.test.ts runs the ```ts ones, which need no files).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Float64, Int32, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { transformSync } from 'esbuild';
import * as lib from 'plumber-data';

const README = join(__dirname, '../../../src/data/README.md');

/** The ```typescript blocks of the section, with the `// → ` lines each must print. */
function examples(heading: string): { code: string; expected: string[] }[] {
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf(heading);
  assert.ok(start >= 0, `no ${heading} in the README`);
  const section = text.slice(start, text.indexOf('\n### ', start + 1));
  const out: { code: string; expected: string[] }[] = [];
  const fence = /^```typescript\n([\s\S]*?)^```$/gm;
  for (let m = fence.exec(section); m !== null; m = fence.exec(section)) {
    out.push({
      code: m[1],
      expected: m[1]
        .split('\n')
        .filter((l) => l.startsWith('// → '))
        .map((l) => l.slice('// → '.length)),
    });
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

describe('src/data/README.md Tables examples', () => {
  let dir: string;
  const cwd = process.cwd();
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plumber-tables-readme-'));
    mkdirSync(join(dir, 'data'));
    const table = new Table({
      id: vectorFromArray([1, 2, 3], new Int32()),
      name: vectorFromArray(['ada', 'grace', null], new Utf8()),
      score: vectorFromArray([0.5, 0.25, 1], new Float64()),
    });
    const pw = await import('parquet-wasm');
    const props = new pw.WriterPropertiesBuilder().setMaxRowGroupSize(2).build();
    writeFileSync(join(dir, 'data', 'scores.parquet'), pw.writeParquet(pw.Table.fromIPCStream(tableToIPC(table, 'stream')), props));
    process.chdir(dir);
  });
  after(() => {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints what the Tables examples say they print', async () => {
    const list = examples('### Tables: Parquet and Arrow');
    assert.ok(list.length > 0);
    for (const { code, expected } of list) assert.deepEqual(await run(code), expected);
  });
});
