/**
 * A stand-in for an object store (S3, GCS, an HTTP file server): a node:http server on 127.0.0.1
 * with an ephemeral port that serves JSON records at `/objects/<n>` after 20–40 ms, the latency of
 * a same-region object store. The remote example starts one per epoch and closes it when the epoch
 * is over, so nothing outlives the iteration.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const OBJECT_COUNT = 2000;

/** A deterministic 32-bit hash: the same object always has the same content and latency. */
function hash(n: number): number {
  let h = (n + 0x9e37) | 0;
  for (let i = 0; i < 4; i++) h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) | 0;
  return h >>> 0;
}

/** The record stored as object `n`: a taxi trip, with the free-text notes real exports carry. */
export function record(n: number): Record<string, unknown> {
  const h = hash(n);
  const distanceKm = (h % 3000) / 100;
  return {
    id: n,
    pickedUpAt: new Date(Date.UTC(2024, 0, 1) + (h % 31_536_000) * 1000).toISOString(),
    passengers: 1 + (h % 4),
    distanceKm,
    // One trip in ten has a broken fare, as real exports do; the pipeline filters those out.
    fareUsd: h % 10 === 0 ? -1 : Math.round((3 + distanceKm * 1.9) * 100) / 100,
    tipUsd: (h % 700) / 100,
    pickup: [40.6 + (h % 1000) / 5000, -74.05 + ((h >>> 10) % 1000) / 5000],
    dropoff: [40.6 + ((h >>> 5) % 1000) / 5000, -74.05 + ((h >>> 15) % 1000) / 5000],
    notes: 'x'.repeat(600 + (h % 900)),
  };
}

/** The latency of object `n`, milliseconds: 20–40. */
export function latencyMs(n: number): number {
  return 20 + (hash(n * 7 + 1) % 21);
}

/** A running object server for one epoch. */
export interface ObjectServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Call when no more object URLs will be handed out: the server closes once the requests for them are answered. */
  done(handedOut: number): void;
  /** Resolves when the server has closed. */
  closed: Promise<void>;
}

/**
 * Starts a server. After `done(k)`, it closes as soon as it has answered k requests, or when it has
 * been idle for a quarter of a second (the consumer stopped early and some URLs were never fetched).
 */
export async function startObjectServer(): Promise<ObjectServer> {
  let answered = 0;
  let active = 0;
  let expected = Infinity;
  let idle: NodeJS.Timeout | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));

  const server: Server = createServer((req, res) => {
    const n = Number(/^\/objects\/(\d+)$/.exec(req.url ?? '')?.[1] ?? NaN);
    if (!Number.isInteger(n) || n < 0 || n >= OBJECT_COUNT) {
      res.writeHead(404).end();
      return;
    }
    active++;
    clearTimeout(idle);
    setTimeout(() => {
      const body = JSON.stringify(record(n));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      active--;
      answered++;
      maybeClose();
    }, latencyMs(n));
  });
  // The server must never be what keeps a finished process alive.
  server.unref();

  function close(): void {
    clearTimeout(idle);
    server.close(() => resolveClosed());
    server.closeAllConnections();
  }
  function maybeClose(): void {
    if (expected === Infinity || active > 0) return;
    if (answered >= expected) return close();
    clearTimeout(idle);
    idle = setTimeout(close, 250).unref();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    done(handedOut) {
      expected = handedOut;
      maybeClose();
    },
    closed,
  };
}

/**
 * The example's source: starts a server for the epoch, hands out the URL of every object, and
 * tells the server when it has handed out the last one (also when the consumer stops early).
 */
export async function* objectUrls(): AsyncGenerator<string> {
  const server = await startObjectServer();
  let handedOut = 0;
  try {
    for (let n = 0; n < OBJECT_COUNT; n++) {
      handedOut++;
      yield `${server.origin}/objects/${n}`;
    }
  } finally {
    server.done(handedOut);
  }
}
