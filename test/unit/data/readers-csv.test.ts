import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { csv, FormatError, jsonLines, PipelineError } from 'plumber-data';
import { gzipFile, python, tempDir, writeCsvWithPython } from './readers-files';

/** The error a pass of the dataset fails with (fails the test when it does not fail). */
async function failure(run: Promise<unknown>): Promise<PipelineError> {
  try {
    await run;
  } catch (e) {
    assert.ok(e instanceof PipelineError, `expected a PipelineError, got ${String(e)}`);
    return e;
  }
  assert.fail('the pass did not fail');
}

describe('plumber-data csv() and jsonLines()', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir()));
  afterEach(() => t.remove());

  it("reads what Python's csv module writes: quoted fields with delimiters, embedded line breaks and doubled quotes, CRLF line ends", async () => {
    const rows = [
      ['id', 'text', 'score'],
      ['1', 'plain', '0.5'],
      ['2', 'has, a comma', '1'],
      ['3', 'two\nlines and a "quote"', '-2.25'],
      ['4', '', ''],
      ['5', 'crlf\r\ninside', 'NaN'],
    ];
    const path = join(t.dir, 'a.csv');
    writeCsvWithPython(path, rows);
    assert.match(readFileSync(path, 'latin1'), /"two\nlines and a ""quote"""/);
    const got = await csv(path).toArray();
    assert.deepEqual(
      got,
      rows.slice(1).map(([id, text, score]) => ({ id, text, score })),
    );
    const typed = await csv(path, { schema: { id: 'int', score: 'number' } }).toArray();
    assert.deepEqual(
      typed.map((r) => r.score),
      [0.5, 1, -2.25, NaN, NaN],
    );
    assert.deepEqual(
      typed.map((r) => r.id),
      [1, 2, 3, 4, 5],
    );
    // Parsed in a worker thread, typed columns cross as typed arrays (NaN included) and come back the same.
    assert.deepEqual(await csv(path, { schema: { id: 'int', score: 'number' }, placement: 'worker' }).toArray(), typed);
  });

  it('takes a delimiter, a header as names or none, and boolean columns', async () => {
    const path = join(t.dir, 'semi.csv');
    writeCsvWithPython(
      path,
      [
        ['x;y', 'true'],
        ['2', 'FALSE'],
        ['3', '1'],
      ],
      { delimiter: ';' },
    );
    assert.deepEqual(await csv(path, { delimiter: ';', header: false }).toArray(), [
      ['x;y', 'true'],
      ['2', 'FALSE'],
      ['3', '1'],
    ]);
    assert.deepEqual(await csv(path, { delimiter: ';', header: false, schema: { 1: 'boolean' }, placement: 'worker' }).toArray(), [
      ['x;y', true],
      ['2', false],
      ['3', true],
    ]);
    assert.deepEqual(
      await csv(path, { delimiter: ';', header: ['a', 'b'], schema: { b: 'boolean' }, placement: 'worker' }).toArray(),
      await csv(path, { delimiter: ';', header: ['a', 'b'], schema: { b: 'boolean' } }).toArray(),
    );
    assert.deepEqual(await csv(path, { delimiter: ';', header: ['a', 'b'], schema: { b: 'boolean' } }).toArray(), [
      { a: 'x;y', b: true },
      { a: '2', b: false },
      { a: '3', b: true },
    ]);
  });

  it('reads a large generated file the same as Python does, whatever falls on a chunk boundary', async () => {
    const path = join(t.dir, 'big.csv');
    // Records with quoted line breaks and quotes in every few rows, over many 64 KB chunks.
    python(
      'import csv, random, sys\nrandom.seed(7)\nw = csv.writer(open(sys.argv[1], "w", newline=""))\nw.writerow(["k", "s", "v"])\nfor i in range(30000):\n  s = "".join(random.choice("ab,\\"\\n x") for _ in range(random.randint(0, 12)))\n  w.writerow([i, s, random.random()])',
      path,
    );
    const expected = JSON.parse(python('import csv, json, sys\nr = list(csv.DictReader(open(sys.argv[1], newline="")))\nprint(json.dumps(r))', path)) as Record<string, string>[];
    const got = await csv(path).toArray();
    assert.equal(got.length, 30000);
    assert.deepEqual(got, expected);
    // And the gzip'd copy (made by gzip) gives the same rows, parsed here or in a worker thread.
    const gz = gzipFile(path);
    assert.deepEqual(await csv(gz).toArray(), expected);
    assert.deepEqual(await csv(gz, { placement: 'worker' }).toArray(), expected);
  });

  it('fails on a row with the wrong number of fields, naming the file and line', async () => {
    const path = join(t.dir, 'short.csv');
    writeFileSync(path, 'a,b\n1,2\n"x\ny",3\n4\n5,6\n');
    const e = await failure(csv(path).toArray());
    assert.ok(e.cause instanceof FormatError);
    assert.equal(e.cause.location, path);
    assert.equal(e.cause.position, 'line 5');
    assert.match(e.message, /short\.csv: line 5: expected 2 fields, found 1/);
    // The same error when the file is parsed in a worker thread.
    assert.match((await failure(csv(path, { placement: 'worker' }).toArray())).message, /short\.csv: line 5: expected 2 fields, found 1/);
    await assert.rejects(csv(path, { placement: 'worker', schema: { a: 'int' } }).toArray(), /short\.csv: line 3: column 'a': 'x\ny' is not an integer/);
  });

  it('fails on an unclosed quote at the end of the file instead of swallowing the rest', async () => {
    const path = join(t.dir, 'open.csv');
    writeFileSync(path, 'a,b\n1,2\n3,"never closed\n4,5\n6,7\n');
    const e = await failure(csv(path).toArray());
    assert.match(e.message, /open\.csv: line 3: .*unclosed quote/);
  });

  it('fails on a value its schema type cannot hold, naming the column, file and line', async () => {
    const path = join(t.dir, 'typed.csv');
    writeFileSync(path, 'n,i\n1.5,2\nabc,3\n');
    assert.match((await failure(csv(path, { schema: { n: 'number' } }).toArray())).message, /typed\.csv: line 3: column 'n': 'abc' is not a number/);
    writeFileSync(path, 'n,i\n1.5,2\n2,3.5\n');
    assert.match((await failure(csv(path, { schema: { i: 'int' } }).toArray())).message, /typed\.csv: line 3: column 'i': '3\.5' is not an integer/);
    await assert.rejects(csv(path, { schema: { nope: 'int' } }).toArray(), /the schema names column 'nope'/);
  });

  it("reads JSON Lines written by Python's json module, skipping blank lines, and names the line of one that is not JSON", async () => {
    const path = join(t.dir, 'a.jsonl');
    const values = [{ a: 1, s: 'x\ny' }, [1, 2], 'str', null, { nested: { u: 'é' } }];
    python('import json, sys\nwith open(sys.argv[1], "w") as f:\n  for v in json.loads(sys.argv[2]):\n    f.write(json.dumps(v) + "\\n\\n")', path, JSON.stringify(values));
    assert.deepEqual(await jsonLines(path).toArray(), values);
    assert.deepEqual(await jsonLines(gzipFile(path)).toArray(), values);
    await assert.rejects(jsonLines(path, { skipEmpty: false }).toArray(), /a\.jsonl: line 2: an empty line/);
    writeFileSync(path, '{"a":1}\n{"a":2}\n{"a":\n');
    assert.match((await failure(jsonLines(path).toArray())).message, /a\.jsonl: line 3: not JSON/);
  });
});
