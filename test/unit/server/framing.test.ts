import * as assert from 'node:assert/strict';
import { FramingGuard } from '../../../src/server/framing';

const frame = (body: string): string => `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/** Feed `chunks` through a guard; what it passed on, and what it logged. */
async function through(chunks: Array<string | Buffer>): Promise<{ out: string; logs: string[] }> {
  const logs: string[] = [];
  const guard = new FramingGuard((m) => logs.push(m));
  const parts: Buffer[] = [];
  guard.on('data', (d: Buffer) => parts.push(d));
  const ended = new Promise<void>((resolve) => guard.on('end', () => resolve()));
  for (const c of chunks) guard.write(c);
  guard.end();
  await ended;
  return { out: Buffer.concat(parts).toString('utf8'), logs };
}

describe('The LSP framing guard', () => {
  it('passes well-formed messages through unchanged, however they are split into chunks', async () => {
    const stream = frame('{"id":1}') + frame('{"text":"é — ✓"}') + 'Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n' + frame('{}');
    const bytes = Buffer.from(stream);
    const oneByteAtATime = [...bytes].map((b) => Buffer.from([b]));
    assert.deepEqual(await through([stream]), { out: stream, logs: [] });
    assert.deepEqual(await through(oneByteAtATime), { out: stream, logs: [] });
  });

  it('drops a header without Content-Length and everything up to the next message, saying why', async () => {
    const r = await through([`X-Junk: 1\r\n\r\n{"method":"stray"}${frame('{"id":2}')}`]);
    assert.equal(r.out, frame('{"id":2}'));
    assert.equal(r.logs.length, 1);
    assert.match(r.logs[0]!, /a header without Content-Length/);
  });

  it('finds the next message even when it arrives chunks later, split inside its header', async () => {
    const next = frame('{"id":3}');
    const r = await through(['X-Junk: 1\r\n\r\n{"a":', '1}Content-Len', next.slice('Content-Len'.length)]);
    assert.equal(r.out, next);
  });

  it('drops a non-numeric Content-Length and a line without a colon', async () => {
    const r = await through([`Content-Length: 12abc\r\n\r\n{}${frame('{"id":4}')}nonsense\r\n\r\n${frame('{"id":5}')}`]);
    assert.equal(r.out, frame('{"id":4}') + frame('{"id":5}'));
    assert.equal(r.logs.length, 2);
  });

  it('gives up on a header that never ends, instead of buffering without bound', async () => {
    const r = await through(['x'.repeat(70 * 1024), frame('{"id":6}')]);
    assert.equal(r.out, frame('{"id":6}'));
    assert.match(r.logs[0]!, /without the blank line that ends a header/);
  });
});
