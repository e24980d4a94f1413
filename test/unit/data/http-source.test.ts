import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpCounters } from '../../../src/data/tracing';
import { expandBraces, expandShards, openRandomAccess, openStream, type OpenOptions } from '../../../src/data/internal/readers/source';
import type { RetryInfo } from '../../../src/data/internal/readers/http';
import { TestServer } from './http-server';

/** `n` bytes from a seeded xorshift generator. */
export function seededBytes(n: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  let x = seed | 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

function counters(): OpCounters {
  return { diskBytesRead: 0, netBytesRead: 0 } as OpCounters;
}

async function drain(shard: string, o: OpenOptions): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const c of openStream({ location: shard, index: 0 }, o)) parts.push(c);
  return Buffer.concat(parts);
}

describe('HTTP(S) shards: streamed reads and range reads against a real local server', () => {
  let server: TestServer;
  const big = seededBytes(1 << 20, 51);
  beforeEach(async () => {
    server = await new TestServer().start();
    server.files.set('big.bin', big);
    server.files.set('small.bin', Buffer.from('hello, shards\n'));
    server.files.set('empty.bin', Buffer.alloc(0));
  });
  afterEach(async () => {
    assert.equal(await server.openSockets(), 0, 'a connection outlived the read');
    await server.stop();
  });

  it('streams a file byte for byte, counting the bytes as read from the network', async () => {
    const c = counters();
    const got = await drain(server.url('big.bin'), { counters: c });
    assert.ok(got.equals(big));
    assert.equal(c.netBytesRead, big.length);
    assert.equal(c.diskBytesRead, 0);
    assert.equal(server.hits('big.bin').length, 1);
  });

  it('resumes a dropped connection with a Range request from the byte reached, never duplicating or dropping a byte', async () => {
    server.faults.set('big.bin', { dropAfter: [100_000, 300_000] });
    const retries: RetryInfo[] = [];
    const c = counters();
    const got = await drain(server.url('big.bin'), { counters: c, http: { retryDelayMs: 1 }, onRetry: (r) => retries.push(r) });
    assert.ok(got.equals(big));
    assert.deepEqual(
      retries.map((r) => r.resumeAt),
      [100_000, 400_000],
    );
    assert.deepEqual(
      server.hits('big.bin').map((r) => [r.range, r.status]),
      [
        [undefined, 200],
        ['bytes=100000-', 206],
        ['bytes=400000-', 206],
      ],
    );
    assert.equal(c.netBytesRead, big.length);
  });

  it('resumes from a server without range support by skipping the bytes already handed on', async () => {
    server.faults.set('big.bin', { dropAfter: [200_000], noRanges: true });
    const c = counters();
    const got = await drain(server.url('big.bin'), { counters: c, http: { retryDelayMs: 1 } });
    assert.ok(got.equals(big));
    assert.equal(server.hits('big.bin').length, 2);
    // The network carried the first 200,000 bytes twice.
    assert.equal(c.netBytesRead, big.length + 200_000);
  });

  it('retries 503 twice with backoff, then reads the file', async () => {
    server.faults.set('small.bin', { statuses: [503, 503] });
    const retries: RetryInfo[] = [];
    const got = await drain(server.url('small.bin'), { counters: null, http: { retryDelayMs: 1 }, onRetry: (r) => retries.push(r) });
    assert.equal(got.toString(), 'hello, shards\n');
    assert.deepEqual(
      retries.map((r) => [r.attempt, r.reason]),
      [
        [1, '503 Service Unavailable'],
        [2, '503 Service Unavailable'],
      ],
    );
  });

  it('gives up after http.retries, saying how often it tried', async () => {
    server.faults.set('small.bin', { statuses: [500, 500, 500, 500] });
    await assert.rejects(drain(server.url('small.bin'), { counters: null, http: { retries: 2, retryDelayMs: 1 } }), {
      name: 'HttpError',
      message: `${server.url('small.bin')}: 500 Internal Server Error (gave up after 2 retries; http.retries is 2).`,
    });
    assert.equal(server.hits('small.bin').length, 3);
  });

  it('fails at once on 404, naming the URL and what to check', async () => {
    await assert.rejects(drain(server.url('missing.bin'), { counters: null }), {
      message: `${server.url('missing.bin')}: 404 Not Found: check the URL.`,
    });
    assert.equal(server.hits('missing.bin').length, 1);
  });

  it('sends http.headers, and a 403 names the credentials', async () => {
    server.faults.set('small.bin', { statuses: [403] });
    await assert.rejects(drain(server.url('small.bin'), { counters: null, http: { headers: { Authorization: 'Bearer t0ken' } } }), {
      message: `${server.url('small.bin')}: 403 Forbidden: check the URL or the credentials in http.headers.`,
    });
    assert.deepEqual(
      server.hits('small.bin').map((r) => r.authorization),
      ['Bearer t0ken'],
    );
  });

  it("follows redirects, sending credentials to the shard's own origin only", async () => {
    const other = await new TestServer().start();
    try {
      other.files.set('moved.bin', big);
      server.faults.set('big.bin', { redirectTo: other.url('moved.bin') });
      const got = await drain(server.url('big.bin'), { counters: null, http: { headers: { Authorization: 'Bearer t0ken' } } });
      assert.ok(got.equals(big));
      assert.deepEqual(
        server.hits('big.bin').map((r) => [r.status, r.authorization]),
        [[302, 'Bearer t0ken']],
      );
      assert.deepEqual(
        other.hits('moved.bin').map((r) => [r.status, r.authorization]),
        [[200, undefined]],
      );
      assert.equal(await other.openSockets(), 0);
    } finally {
      await other.stop();
    }
  });

  it('counts a stall longer than http.timeoutMs as a transient failure', async () => {
    server.faults.set('small.bin', { firstByteDelayMs: 400 });
    const retries: RetryInfo[] = [];
    const got = await drain(server.url('small.bin'), { counters: null, http: { timeoutMs: 100, retryDelayMs: 1 }, onRetry: (r) => retries.push(r) });
    assert.equal(got.toString(), 'hello, shards\n');
    assert.equal(retries.length, 1);
    assert.match(retries[0].reason, /no byte for 100 ms \(http\.timeoutMs\)/);
    server.faults.set('big.bin', { firstByteDelayMs: 400 });
    await assert.rejects(drain(server.url('big.bin'), { counters: null, http: { timeoutMs: 100, retries: 0 } }), /big\.bin: no byte for 100 ms \(http\.timeoutMs\) \(gave up after 0 retries/);
  });

  it('stops on abort and when the consumer stops early, leaving no connection open', async () => {
    const abort = new AbortController();
    const it = openStream({ location: server.url('big.bin'), index: 0 }, { counters: null, signal: abort.signal });
    await it.next();
    abort.abort();
    await assert.rejects(async () => {
      for await (const _ of it) void _;
    });
    for await (const _ of openStream({ location: server.url('big.bin'), index: 0 }, { counters: null })) {
      void _;
      break;
    }
  });

  it('reads ranges: the size and the tail from one suffix request, then only the bytes asked for', async () => {
    const c = counters();
    const file = await openRandomAccess({ location: server.url('big.bin'), index: 0 }, { counters: c });
    try {
      assert.equal(file.size, big.length);
      assert.ok(Buffer.from(await file.read(big.length - 100, big.length)).equals(big.subarray(big.length - 100)));
      assert.ok(Buffer.from(await file.read(1000, 3000)).equals(big.subarray(1000, 3000)));
      assert.deepEqual(
        server.hits('big.bin').map((r) => r.range),
        ['bytes=-65536', 'bytes=1000-2999'],
      );
      assert.equal(c.netBytesRead, 65536 + 2000);
    } finally {
      await file.close();
    }
  });

  it('range-reads a server without ranges from the one whole body it sends', async () => {
    server.faults.set('big.bin', { noRanges: true });
    const c = counters();
    const file = await openRandomAccess({ location: server.url('big.bin'), index: 0 }, { counters: c });
    try {
      assert.equal(file.size, big.length);
      assert.ok(Buffer.from(await file.read(5, 70_000)).equals(big.subarray(5, 70_000)));
      assert.equal(server.hits('big.bin').length, 1);
      assert.equal(c.netBytesRead, big.length);
    } finally {
      await file.close();
    }
    const empty = await openRandomAccess({ location: server.url('empty.bin'), index: 0 }, { counters: null });
    assert.equal(empty.size, 0);
    await empty.close();
  });

  it('retries a range read that breaks, returning exactly the range', async () => {
    server.faults.set('big.bin', { dropAfter: [undefined, 500] });
    const file = await openRandomAccess({ location: server.url('big.bin'), index: 0 }, { counters: null, http: { retryDelayMs: 1 } });
    try {
      assert.ok(Buffer.from(await file.read(10_000, 20_000)).equals(big.subarray(10_000, 20_000)));
      assert.equal(server.hits('big.bin').length, 3);
    } finally {
      await file.close();
    }
  });
});

describe('shard lists', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'plumber-shards-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('expands WebDataset brace ranges, zero-padded, in order; lists in URLs', () => {
    assert.deepEqual(expandBraces('https://h/shard-{0000..0002}.tar'), ['https://h/shard-0000.tar', 'https://h/shard-0001.tar', 'https://h/shard-0002.tar']);
    assert.deepEqual(expandBraces('http://h/{a,b}/{8..10}.tar'), ['http://h/a/8.tar', 'http://h/a/9.tar', 'http://h/a/10.tar', 'http://h/b/8.tar', 'http://h/b/9.tar', 'http://h/b/10.tar']);
    assert.deepEqual(expandBraces('data/{a,b}.csv'), ['data/{a,b}.csv']);
  });

  it('lists local brace ranges, globs and URLs as shards in order, and names a pattern that matches nothing', async () => {
    for (const n of ['s-0.csv', 's-1.csv', 's-2.csv']) writeFileSync(join(dir, n), 'x');
    const shards = await expandShards(['s-{0..1}.csv', 'http://h/a.csv', '*-2.csv'], dir);
    assert.deepEqual(
      shards.map((s) => [s.index, s.location]),
      [
        [0, join(dir, 's-0.csv')],
        [1, join(dir, 's-1.csv')],
        [2, 'http://h/a.csv'],
        [3, join(dir, 's-2.csv')],
      ],
    );
    await assert.rejects(expandShards('s-{0..3}.csv', dir), { message: `s-3.csv: no such file (relative paths are resolved against ${dir}).` });
    await assert.rejects(expandShards('*.tar', dir), /\*\.tar: no such file matches this pattern/);
  });
});
