/**
 * LSP framing, checked before vscode-jsonrpc reads it. The library's reader, given a header block
 * without a usable `Content-Length`, reports an error and returns with the rest of that message
 * still in its buffer: from then on every header it reads starts inside the stray body, and the
 * server never answers again. This guard sits between stdin and that reader and passes on only
 * well-formed messages. A malformed header block is dropped with a logged reason, and so is
 * everything after it up to the next `Content-Length:` header, where framing is found again; a
 * following well-formed request is answered as if nothing had happened.
 */
import { Transform, type TransformCallback } from 'node:stream';

const HEADER_END = Buffer.from('\r\n\r\n', 'latin1');
const NEXT_HEADER = 'content-length:';
/** No real client sends header blocks this long: past it, what is buffered is not a header. */
const MAX_HEADER_BYTES = 64 * 1024;

/** Why a header block is unusable, or its body length. */
function parseHeader(block: string): { length: number } | { error: string } {
  let length: number | undefined;
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) return { error: `a header line without "name: value" (${JSON.stringify(line.slice(0, 80))})` };
    if (line.slice(0, colon).trim().toLowerCase() !== 'content-length') continue;
    const value = line.slice(colon + 1).trim();
    if (!/^\d{1,15}$/.test(value)) return { error: `a Content-Length that is not a byte count (${JSON.stringify(value.slice(0, 40))})` };
    length = Number(value);
  }
  return length === undefined ? { error: 'a header without Content-Length' } : { length };
}

/** Passes well-formed LSP messages through unchanged and drops malformed framing, calling `log` with why. */
export class FramingGuard extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  /** Chunks of a body still arriving, joined once it is complete (a 5 MB document comes in ~80). */
  private arriving: Buffer[] = [];
  private arrivingBytes = 0;
  /** The body length of the message whose header was read, while its body is still arriving. */
  private bodyLength = -1;
  private header: Buffer = Buffer.alloc(0);
  /** After a malformed header: dropping bytes until the next `Content-Length:`. */
  private resyncing = false;

  constructor(private readonly log: (message: string) => void) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.arriving.push(chunk);
    this.arrivingBytes += chunk.length;
    if (this.bodyLength >= 0 && this.pending.length + this.arrivingBytes < this.bodyLength) {
      callback();
      return;
    }
    this.pending = Buffer.concat([this.pending, ...this.arriving]);
    this.arriving = [];
    this.arrivingBytes = 0;
    this.drain();
    callback();
  }

  private drain(): void {
    for (;;) {
      if (this.resyncing && !this.resync()) return;
      if (this.bodyLength >= 0) {
        if (this.pending.length < this.bodyLength) return;
        this.push(Buffer.concat([this.header, this.pending.subarray(0, this.bodyLength)]));
        this.pending = this.pending.subarray(this.bodyLength);
        this.bodyLength = -1;
        continue;
      }
      const end = this.pending.indexOf(HEADER_END);
      if (end < 0) {
        if (this.pending.length > MAX_HEADER_BYTES) this.malformed(`${this.pending.length} bytes without the blank line that ends a header`, this.pending.length);
        else return;
        continue;
      }
      const parsed = parseHeader(this.pending.subarray(0, end).toString('latin1'));
      if ('error' in parsed) {
        this.malformed(parsed.error, end + HEADER_END.length);
        continue;
      }
      this.header = this.pending.subarray(0, end + HEADER_END.length);
      this.pending = this.pending.subarray(end + HEADER_END.length);
      this.bodyLength = parsed.length;
    }
  }

  /** Drop `consumed` bytes of a malformed header and look for the next message. */
  private malformed(why: string, consumed: number): void {
    this.log(`Plumber ignored a malformed LSP message from the client: ${why}. Everything up to the next Content-Length header is skipped.`);
    this.pending = this.pending.subarray(consumed);
    this.resyncing = true;
  }

  /** Skip to the next `Content-Length:`; false while it has not arrived (a possible start of it is kept). */
  private resync(): boolean {
    const text = this.pending.toString('latin1').toLowerCase();
    const at = text.indexOf(NEXT_HEADER);
    if (at < 0) {
      this.pending = this.pending.subarray(Math.max(0, this.pending.length - (NEXT_HEADER.length - 1)));
      return false;
    }
    this.pending = this.pending.subarray(at);
    this.resyncing = false;
    return true;
  }
}
