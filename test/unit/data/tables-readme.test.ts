/**
 * The "Tables" examples of src/data/README.md, run on the files they name: Parquet written by
 * arrow-rs (parquet-wasm) in a fresh directory the examples run in. They are fenced ```typescript
 * (readme.test.ts runs the ```ts ones, which need no files).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Float64, Int32, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { examples, runExample } from './readme-examples';

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
    for (const { code, expected } of list) assert.deepEqual(await runExample(code), expected);
  });
});
