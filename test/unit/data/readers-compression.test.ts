import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants } from 'node:zlib';
import { csv, FormatError, jsonLines, lines, PipelineError } from 'plumber-data';
import { traced } from './helpers';
import { gzipFile, python, tempDir, truncate } from './readers-files';

describe('plumber-data readers: compression', () => {
  let t: ReturnType<typeof tempDir>;
  let plain: string;
  let expected: unknown[];
  beforeEach(() => {
    t = tempDir();
    plain = join(t.dir, 'rows.jsonl');
    // About 1 MB of JSON Lines: many gzip blocks and many 64 KB chunks.
    python('import json, sys\nwith open(sys.argv[1], "w") as f:\n  for i in range(20000):\n    f.write(json.dumps({"i": i, "s": "row %d " % i * 3}) + "\\n")', plain);
    expected = readFileSync(plain, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as unknown);
  });
  afterEach(() => t.remove());

  it('inflates gzip by extension, and counts the compressed bytes read and the bytes after inflating', async () => {
    const gz = gzipFile(plain);
    const { tracer, value } = traced(() => jsonLines(gz));
    assert.deepEqual(await value.toArray(), expected);
    const { counters } = tracer.only('jsonLines');
    assert.equal(counters.diskBytesRead, statSync(gz).size);
    assert.equal(counters.bytesDecompressed, statSync(plain).size);
    assert.equal(counters.sourceBytes, statSync(gz).size);
    assert.ok((counters.decompressSeconds ?? 0) > 0);
    assert.equal(counters.produced, 20000);
  });

  it('inflates concatenated gzip members (cat a.gz b.gz) as one stream', async () => {
    const gz = gzipFile(plain);
    const both = join(t.dir, 'both.jsonl.gz');
    execFileSync('sh', ['-c', 'cat "$0" "$0" > "$1"', gz, both]);
    assert.deepEqual(await jsonLines(both).toArray(), [...expected, ...expected]);
  });

  it('finds gzip by its magic bytes when the name does not say, and honours a forced compression', async () => {
    const gz = gzipFile(plain);
    const unnamed = join(t.dir, 'rows.data');
    copyFileSync(gz, unnamed);
    assert.deepEqual(await jsonLines(unnamed).toArray(), expected);
    assert.deepEqual(await jsonLines(unnamed, { compression: 'gzip' }).toArray(), expected);
    // Forced off, the compressed bytes are parsed as they are, and are not JSON.
    await assert.rejects(jsonLines(unnamed, { compression: 'none' }).toArray(), /rows\.data: line 1: not JSON/);
  });

  it('inflates brotli by extension or when forced', async () => {
    const br = join(t.dir, 'rows.jsonl.br');
    writeFileSync(br, brotliCompressSync(readFileSync(plain), { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }));
    assert.deepEqual(await jsonLines(br).toArray(), expected);
    const unnamed = join(t.dir, 'rows.bin');
    copyFileSync(br, unnamed);
    assert.deepEqual(await jsonLines(unnamed, { compression: 'brotli' }).toArray(), expected);
  });

  it('fails on a truncated gzip (head -c) or brotli file naming the file and the byte where it ends, never with fewer rows in silence', async () => {
    const gz = gzipFile(plain);
    const cut = join(t.dir, 'cut.jsonl.gz');
    const size = Math.floor(statSync(gz).size / 2);
    truncate(gz, size, cut);
    await assert.rejects(jsonLines(cut).toArray(), (err: unknown) => {
      assert.ok(err instanceof PipelineError);
      assert.ok(err.cause instanceof FormatError);
      assert.equal(err.cause.location, cut);
      assert.match(err.message, new RegExp(`cut\\.jsonl\\.gz: byte [0-9,]+: unexpected end of gzip data at byte ${size} — the file is truncated`));
      return true;
    });
    // lines() too.
    await assert.rejects(lines(cut).toArray(), /cut\.jsonl\.gz: .*the file is truncated/);
    // And brotli.
    const br = readFileSync(plain);
    const cutBr = join(t.dir, 'cut.jsonl.br');
    writeFileSync(cutBr, brotliCompressSync(br, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }).subarray(0, 5000));
    await assert.rejects(jsonLines(cutBr).toArray(), /cut\.jsonl\.br: byte 5,000: unexpected end of brotli data at byte 5000 — the file is truncated/);
  });

  it('fails on corrupt gzip bytes naming the file and the compressed offset', async () => {
    const gz = gzipFile(plain);
    const bad = readFileSync(gz);
    for (let i = 2000; i < 2100; i++) bad[i] ^= 0x5a;
    const path = join(t.dir, 'bad.jsonl.gz');
    writeFileSync(path, bad);
    await assert.rejects(jsonLines(path).toArray(), /bad\.jsonl\.gz: byte [0-9,]+: corrupt gzip data at or before compressed byte \d+/);
  });

  it("lines() reads gzip'd files like plain ones, and keeps plain files on their direct path", async () => {
    const gz = gzipFile(plain);
    const want = readFileSync(plain, 'utf8').split('\n').slice(0, -1);
    const { tracer, value } = traced(() => lines(gz));
    assert.deepEqual(await value.toArray(), want);
    assert.equal(tracer.only('lines').counters.bytesDecompressed, statSync(plain).size);
    const p = traced(() => lines(plain));
    assert.deepEqual(await p.value.toArray(), want);
    assert.equal(p.tracer.only('lines').counters.bytesDecompressed, undefined);
    assert.equal(p.tracer.only('lines').counters.diskBytesRead, statSync(plain).size);
  });

  it("reads a gzip'd CSV made by gzip in a worker thread the same as on the main thread", async () => {
    const path = join(t.dir, 't.csv');
    python('import csv, sys\nw = csv.writer(open(sys.argv[1], "w", newline=""))\nw.writerow(["a", "b"])\nfor i in range(5000): w.writerow([i, "x\\ny %d" % i])', path);
    const gz = gzipFile(path);
    assert.deepEqual(await csv(gz, { placement: 'worker' }).toArray(), await csv(gz).toArray());
  });
});
