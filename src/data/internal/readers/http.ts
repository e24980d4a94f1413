/**
 * HTTP(S) shards: streamed GETs that resume where a broken connection left off, and range reads.
 *
 * Rules this file keeps:
 * - A transient failure (a reset or refused connection, a stall longer than `timeoutMs`, a body
 *   cut short, 408, 429, 5xx) is retried up to `retries` times with exponential backoff and jitter;
 *   any other 4xx fails at once with a sentence naming the URL and the status.
 * - A resumed stream never duplicates or drops a byte: it asks for `Range: bytes=<reached>-` and
 *   checks the `Content-Range` start; a server that answers 200 instead (no range support) sends
 *   the whole body again and the bytes already handed on are skipped. A changed `ETag` between
 *   the two responses is an error (the file changed under the read).
 * - Every request of one open shard goes through its own agent, destroyed when the shard is done
 *   (the stream ends, is abandoned, or `close()` is called), so no socket outlives a pass.
 * - `netBytesRead` counts every body byte received, retried ones included: it is what crossed the network.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { OpCounters } from '../../tracing';
import type { HttpOptions } from '../../options';
import type { RandomAccess } from './format';

/** What an open HTTP(S) shard needs to know. */
export interface HttpOpenOptions {
  http?: HttpOptions;
  signal?: AbortSignal;
  counters: OpCounters | null;
  /** Told of each retry before its backoff (for logs and tests). */
  onRetry?(info: RetryInfo): void;
}

/** One retry of a transient failure. */
export interface RetryInfo {
  url: string;
  /** 1 for the first retry. */
  attempt: number;
  /** Why the previous attempt failed, as a sentence. */
  reason: string;
  /** Bytes of the stream already handed on (the resume point), 0 for range reads. */
  resumeAt: number;
}

/** An HTTP(S) failure that retrying cannot fix (or that outlasted its retries). */
export class HttpError extends Error {
  constructor(
    readonly url: string,
    /** The HTTP status, or 0 when no response came. */
    readonly status: number,
    message: string,
  ) {
    super(`${url}: ${message}`);
    this.name = 'HttpError';
  }
}

const DEFAULT_RETRIES = 3;
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_RETRY_DELAY_MS = 200;
const MAX_RETRY_DELAY_MS = 10_000;
const MAX_REDIRECTS = 5;
/** The tail fetched first by a range-read shard: Parquet's footer usually fits in it. */
export const TAIL_BYTES = 1 << 16;
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);
const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'UND_ERR_SOCKET']);

/** A failure worth another attempt; `retryAfterMs` is the server's `Retry-After`, if any. */
class Transient extends Error {
  constructor(
    message: string,
    readonly retryAfterMs = 0,
  ) {
    super(message);
  }
}

function isTransient(e: unknown): boolean {
  if (e instanceof Transient) return true;
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TRANSIENT_CODES.has(code);
}

const STATUS_ADVICE: Record<number, string> = {
  400: 'the server rejected the request',
  401: 'check the credentials in http.headers',
  403: 'check the URL or the credentials in http.headers',
  404: 'check the URL',
  410: 'the file was removed; check the URL',
};

/** Throws for a status that is not a success: Transient for 408, 429 and 5xx, HttpError for the rest. */
function checkStatus(url: string, res: IncomingMessage): void {
  const status = res.statusCode ?? 0;
  if (status >= 200 && status < 300) return;
  const text = `${status} ${res.statusMessage ?? http.STATUS_CODES[status] ?? ''}`.trim();
  if (status === 408 || status === 429 || status >= 500) {
    const after = Number(res.headers['retry-after']);
    throw new Transient(text, Number.isFinite(after) && after > 0 ? Math.min(after, 30) * 1000 : 0);
  }
  throw new HttpError(url, status, `${text}: ${STATUS_ADVICE[status] ?? 'check the URL and http.headers'}.`);
}

/** Retries, backoff and the agent of one open shard. */
class Connection {
  /** One agent per protocol (a redirect may change it), each destroyed by `close()`. */
  private readonly agents = new Map<boolean, http.Agent>();
  private readonly origin: string;
  private readonly retries: number;
  private readonly timeoutMs: number;
  private readonly delayMs: number;

  constructor(
    readonly url: string,
    private readonly o: HttpOpenOptions,
  ) {
    this.origin = new URL(url).origin;
    this.retries = o.http?.retries ?? DEFAULT_RETRIES;
    this.timeoutMs = o.http?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.delayMs = o.http?.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
  }

  countBytes(n: number): void {
    if (this.o.counters !== null) this.o.counters.netBytesRead = (this.o.counters.netBytesRead ?? 0) + n;
  }

  /** A GET whose response has a success status (redirects followed); the body is not read yet. */
  async get(extraHeaders: Record<string, string>): Promise<IncomingMessage> {
    let url = this.url;
    for (let hop = 0; ; hop++) {
      const res = await this.request(url, extraHeaders);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (status >= 300 && status < 400 && location !== undefined && hop < MAX_REDIRECTS) {
        res.resume();
        url = new URL(location, url).href;
        continue;
      }
      try {
        checkStatus(this.url, res);
      } catch (e) {
        res.resume();
        throw e;
      }
      return res;
    }
  }

  private request(url: string, extraHeaders: Record<string, string>): Promise<IncomingMessage> {
    const secure = url.startsWith('https:');
    const lib = secure ? https : http;
    let agent = this.agents.get(secure);
    if (agent === undefined) {
      agent = new (secure ? https.Agent : http.Agent)({ keepAlive: true, maxSockets: 8 });
      this.agents.set(secure, agent);
    }
    // Credentials go to the shard's own origin only, not to where it redirects (a CDN, a presigned store).
    const sameOrigin = new URL(url).origin === this.origin;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...this.o.http?.headers, ...extraHeaders })) {
      if (sameOrigin || !CREDENTIAL_HEADERS.has(k.toLowerCase())) headers[k] = v;
    }
    const signal = this.o.signal;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const req = lib.get(url, { agent, headers }, (res) => {
        // An abort or reset before the body is read must not become an uncaught 'error' event: the
        // error stays on the stream (`errored`), and reading it throws there.
        res.on('error', () => {});
        resolve(res);
      });
      // An abort destroys the request without an error, and the reader learns of it from the
      // signal: with an error (as Node's own `signal` option does), a kept-alive socket already
      // back in the agent's pool emits it where nobody listens, an uncaught exception.
      const onAbort = (): void => {
        req.destroy();
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('close', () => signal?.removeEventListener('abort', onAbort));
      // The socket's idle timeout covers the wait for the headers and every wait for a body byte.
      req.setTimeout(this.timeoutMs, () => req.destroy(new Transient(`no byte for ${this.timeoutMs} ms (http.timeoutMs)`)));
      req.on('error', reject);
    });
  }

  /**
   * Called with each failure: rethrows one that retrying cannot fix or that used up the retries,
   * else waits out the backoff. `progress` is how far a stream got: progress since the previous
   * failure restores the retry budget, so a long download survives many separate hiccups.
   */
  async failed(e: unknown, budget: RetryBudget, progress = 0): Promise<void> {
    if (this.o.signal?.aborted) throw this.o.signal.reason ?? e;
    if (e instanceof HttpError) throw e;
    const reason = e instanceof Error ? e.message : String(e);
    if (!isTransient(e)) throw new HttpError(this.url, 0, reason);
    if (progress > budget.progress) budget.failures = 0;
    budget.progress = progress;
    if (budget.failures >= this.retries) {
      throw new HttpError(this.url, 0, `${reason} (gave up after ${budget.failures} ${budget.failures === 1 ? 'retry' : 'retries'}; http.retries is ${this.retries}).`);
    }
    budget.failures++;
    this.o.onRetry?.({ url: this.url, attempt: budget.failures, reason, resumeAt: progress });
    const backoff = Math.min(MAX_RETRY_DELAY_MS, this.delayMs * 2 ** (budget.failures - 1)) * (0.5 + Math.random() / 2);
    await sleep(Math.max(backoff, e instanceof Transient ? e.retryAfterMs : 0), this.o.signal);
  }

  /** Runs `attempt` until it succeeds or the retries run out. */
  async retrying<T>(attempt: () => Promise<T>): Promise<T> {
    const budget: RetryBudget = { failures: 0, progress: 0 };
    for (;;) {
      try {
        return await attempt();
      } catch (e) {
        await this.failed(e, budget);
      }
    }
  }
}

/** Failures since the last progress, and that progress. */
interface RetryBudget {
  failures: number;
  progress: number;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `bytes a-b/total` → its parts (total NaN when `*`). */
function parseContentRange(value: string | undefined): { start: number; end: number; total: number } | null {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(value ?? '');
  return m === null ? null : { start: Number(m[1]), end: Number(m[2]), total: m[3] === '*' ? NaN : Number(m[3]) };
}

/** Where a stream stands: bytes handed on, the expected total, the first response's ETag. */
interface StreamState {
  reached: number;
  total: number;
  etag: string | undefined;
}

/**
 * Opens the body at `state.reached`: returns the response and how many of its first bytes were
 * already handed on (non-zero when a server without ranges resent the whole body).
 */
async function openAt(conn: Connection, state: StreamState): Promise<{ res: IncomingMessage; skip: number }> {
  const { reached, etag } = state;
  const headers: Record<string, string> = reached > 0 ? { Range: `bytes=${reached}-` } : {};
  if (reached > 0 && etag !== undefined && !etag.startsWith('W/')) headers['If-Range'] = etag;
  const res = await conn.get(headers);
  if (reached === 0) {
    state.total = Number(res.headers['content-length'] ?? NaN);
    state.etag = res.headers.etag;
    return { res, skip: 0 };
  }
  if (res.statusCode === 206) {
    if (parseContentRange(res.headers['content-range'])?.start === reached) return { res, skip: 0 };
    res.destroy();
    throw new HttpError(conn.url, 206, `asked to resume at byte ${reached} but the server sent ${res.headers['content-range'] ?? 'no Content-Range'}.`);
  }
  if (etag !== undefined && res.headers.etag !== undefined && res.headers.etag !== etag) {
    res.destroy();
    throw new HttpError(conn.url, res.statusCode ?? 0, `the file changed while it was read (ETag ${etag} became ${res.headers.etag}).`);
  }
  return { res, skip: reached };
}

/** The URL's body, streamed; a broken connection resumes from the byte reached. */
export async function* httpStream(url: string, o: HttpOpenOptions): AsyncGenerator<Uint8Array> {
  const conn = new Connection(url, o);
  const state: StreamState = { reached: 0, total: NaN, etag: undefined };
  const budget: RetryBudget = { failures: 0, progress: 0 };
  try {
    for (;;) {
      let res: IncomingMessage | null = null;
      try {
        const opened = await openAt(conn, state);
        res = opened.res;
        let skip = opened.skip;
        for await (const chunk of res as AsyncIterable<Buffer>) {
          conn.countBytes(chunk.length);
          const n = Math.min(skip, chunk.length);
          skip -= n;
          if (n === chunk.length) continue;
          const c = n === 0 ? chunk : chunk.subarray(n);
          state.reached += c.length;
          yield c;
        }
        if (state.reached < state.total) throw new Transient(`the body ended at byte ${state.reached} of ${state.total}`);
        return;
      } catch (e) {
        res?.destroy();
        await conn.failed(e, budget, state.reached);
      }
    }
  } finally {
    conn.close();
  }
}

/** A whole response body, counted. */
async function readBody(conn: Connection, res: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      conn.countBytes(chunk.length);
      parts.push(chunk);
      n += chunk.length;
    }
  } catch (e) {
    res.destroy();
    throw e;
  }
  const expected = Number(res.headers['content-length'] ?? NaN);
  if (n < expected) throw new Transient(`the body ended at byte ${n} of ${expected}`);
  return Buffer.concat(parts, n);
}

/**
 * The URL opened for range reads. The first request asks for the last `TAIL_BYTES` (a suffix
 * range), which gives the size and the footer a Parquet reader wants first, in one round trip. A
 * server that ignores ranges answers with the whole body, which is then kept and sliced: correct,
 * but every byte is read.
 */
export async function httpRandomAccess(url: string, o: HttpOpenOptions): Promise<RandomAccess & { close(): Promise<void> }> {
  const conn = new Connection(url, o);
  try {
    let whole: Buffer | null = null;
    let tail: Buffer = Buffer.alloc(0);
    let size = 0;
    await conn.retrying(async () => {
      const res = await conn.get({ Range: `bytes=-${TAIL_BYTES}` }).catch((e: unknown) => {
        // An empty file cannot satisfy a suffix range.
        if (e instanceof HttpError && e.status === 416) return null;
        throw e;
      });
      if (res === null) return;
      const body = await readBody(conn, res);
      if (res.statusCode === 206) {
        const range = parseContentRange(res.headers['content-range']);
        if (range === null || !Number.isFinite(range.total) || range.end !== range.total - 1 || body.length !== range.end - range.start + 1) {
          throw new HttpError(url, 206, `the server answered a range request with ${res.headers['content-range'] ?? 'no Content-Range'}, not the file's last bytes.`);
        }
        size = range.total;
        tail = body;
      } else {
        whole = body;
        size = body.length;
      }
    });
    const tailStart = size - tail.length;
    return {
      size,
      async read(start, end) {
        start = Math.max(0, start);
        end = Math.min(size, end);
        if (end <= start) return new Uint8Array(0);
        if (whole !== null) return (whole as Buffer).subarray(start, end);
        if (start >= tailStart) return tail.subarray(start - tailStart, end - tailStart);
        return conn.retrying(async () => {
          const res = await conn.get({ Range: `bytes=${start}-${end - 1}` });
          const body = await readBody(conn, res);
          if (res.statusCode !== 206) {
            // The server stopped honouring ranges: keep the whole body from now on.
            whole = body;
            return body.subarray(start, end);
          }
          const range = parseContentRange(res.headers['content-range']);
          if (range?.start !== start || body.length !== end - start) {
            throw new HttpError(url, 206, `asked for bytes ${start}-${end - 1} but the server sent ${res.headers['content-range'] ?? 'no Content-Range'} (${body.length} bytes).`);
          }
          return body;
        });
      },
      async close() {
        conn.close();
      },
    };
  } catch (e) {
    conn.close();
    throw e;
  }
}

const HTTP_KEYS = ['headers', 'retries', 'timeoutMs', 'retryDelayMs'];

/** Checks a reader's `http` options when it is built, so a bad one fails there and not on the first request. */
export function checkHttpOptions(kind: string, h: HttpOptions | undefined): void {
  if (h === undefined) return;
  if (typeof h !== 'object' || h === null) throw new TypeError(`${kind}() http must be an object with ${HTTP_KEYS.join(', ')}.`);
  const unknown = Object.keys(h).filter((k) => !HTTP_KEYS.includes(k));
  if (unknown.length > 0) throw new TypeError(`${kind}() http has no option ${unknown.map((k) => `'${k}'`).join(', ')}; it takes ${HTTP_KEYS.join(', ')}.`);
  if (h.headers !== undefined && (typeof h.headers !== 'object' || h.headers === null || Object.values(h.headers).some((v) => typeof v !== 'string'))) {
    throw new TypeError(`${kind}() http.headers must map header names to strings.`);
  }
  const check = (name: string, v: number | undefined, ok: (v: number) => boolean, what: string): void => {
    if (v !== undefined && (typeof v !== 'number' || !ok(v))) throw new RangeError(`${kind}() http.${name} must be ${what}, not ${JSON.stringify(v)}.`);
  };
  check('retries', h.retries, (v) => Number.isInteger(v) && v >= 0, 'a whole number ≥ 0');
  check('timeoutMs', h.timeoutMs, (v) => Number.isFinite(v) && v > 0, 'a number of milliseconds > 0');
  check('retryDelayMs', h.retryDelayMs, (v) => Number.isFinite(v) && v >= 0, 'a number of milliseconds ≥ 0');
}
