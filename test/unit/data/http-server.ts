/**
 * A real HTTP server on 127.0.0.1 (port 0) serving in-memory files, with faults the tests inject:
 * a connection dropped after N body bytes, error statuses before success, a slow first byte, no
 * range support. It records every request and every socket, so tests can count retries and check
 * that no connection outlives a read.
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Faults for one path, consumed request by request. */
export interface Faults {
  /** The i-th request (from 0) to this path: destroy the connection after this many body bytes. */
  dropAfter?: (number | undefined)[];
  /** Answer the first requests with these statuses (e.g. `[503, 503]`), then serve. */
  statuses?: (number | undefined)[];
  /** Hold the first request's headers back this long (ms). */
  firstByteDelayMs?: number;
  /** Ignore `Range` headers (always 200 with the whole body). */
  noRanges?: boolean;
  /** Answer every request with `302 Found` to this URL. */
  redirectTo?: string;
}

export interface Served {
  path: string;
  range: string | undefined;
  authorization: string | undefined;
  status: number;
  bytes: number;
}

export class TestServer {
  readonly files = new Map<string, Buffer>();
  readonly faults = new Map<string, Faults>();
  readonly requests: Served[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly counts = new Map<string, number>();
  private server: http.Server | null = null;
  /** Sockets the server has seen (open and closed). */
  socketsSeen = 0;

  /** `http://127.0.0.1:<port>` once started. */
  base = '';

  async start(): Promise<this> {
    const server = http.createServer((req, res) => this.serve(req, res));
    server.on('connection', (s: Socket) => {
      this.socketsSeen++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  url(path: string): string {
    return `${this.base}/${path}`;
  }

  /** Connections still open, after giving closes already sent a moment to arrive. */
  async openSockets(): Promise<number> {
    for (let i = 0; i < 50 && this.sockets.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
    return this.sockets.size;
  }

  /** Requests made for `path`. */
  hits(path: string): Served[] {
    return this.requests.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = decodeURIComponent((req.url ?? '/').slice(1));
    const n = this.counts.get(path) ?? 0;
    this.counts.set(path, n + 1);
    const faults = this.faults.get(path) ?? {};
    const record = (status: number, bytes: number): void => void this.requests.push({ path, range: req.headers.range, authorization: req.headers.authorization, status, bytes });
    if (faults.redirectTo !== undefined) {
      record(302, 0);
      res.writeHead(302, { Location: faults.redirectTo }).end();
      return;
    }
    const body = this.files.get(path);
    const status = faults.statuses?.[n];
    if (body === undefined || status !== undefined) {
      const s = status ?? 404;
      record(s, 0);
      res.writeHead(s, { 'Content-Type': 'text/plain' }).end(http.STATUS_CODES[s]);
      return;
    }
    const send = (): void => {
      let start = 0;
      let end = body.length;
      const headers: http.OutgoingHttpHeaders = { ETag: '"v1"', 'Content-Type': 'application/octet-stream' };
      let code = 200;
      const range = faults.noRanges ? undefined : /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
      if (!faults.noRanges) headers['Accept-Ranges'] = 'bytes';
      if (range) {
        if (range[1] === '') start = Math.max(0, body.length - Number(range[2]));
        else {
          start = Number(range[1]);
          if (range[2] !== '') end = Math.min(body.length, Number(range[2]) + 1);
        }
        if (start >= body.length) {
          record(416, 0);
          res.writeHead(416, { 'Content-Range': `bytes */${body.length}` }).end();
          return;
        }
        code = 206;
        headers['Content-Range'] = `bytes ${start}-${end - 1}/${body.length}`;
      }
      headers['Content-Length'] = end - start;
      res.writeHead(code, headers);
      const part = body.subarray(start, end);
      const drop = faults.dropAfter?.[n];
      if (drop !== undefined && drop < part.length) {
        record(code, drop);
        res.write(part.subarray(0, drop), () => res.socket?.destroy());
        return;
      }
      record(code, part.length);
      res.end(part);
    };
    if (n === 0 && faults.firstByteDelayMs) setTimeout(send, faults.firstByteDelayMs);
    else send();
  }
}
