/**
 * Reader threads kept warm between passes. Starting a thread costs about as much as a pass of a
 * small dataset reads, and a fresh thread parses with cold code (the JIT starts over) — so a
 * worker-placed reader restarted every pass read slower than one thread. A reader whose pass ran
 * to its end parks its threads here; the next pass of any reader takes them back.
 *
 * Rules: only a thread that read every shard it opened to the end is parked (one returned or
 * failed mid-shard is ended); a parked thread holds no file, does not keep the process alive
 * (unref'd) and is ended after LINGER_MS without use; at most as many threads are parked as
 * there are cores. `PLUMBER_READER_LINGER_MS` sets the linger (0 ends threads with their pass).
 */
import { availableParallelism } from 'node:os';
import { readerThreads, WorkerHost } from './worker-host';

/** Milliseconds a parked thread waits for a next pass before it is ended. */
const LINGER_MS = 10_000;

function lingerMs(): number {
  const env = Number(process.env.PLUMBER_READER_LINGER_MS);
  return Number.isFinite(env) && env >= 0 ? env : LINGER_MS;
}

interface Parked {
  host: WorkerHost;
  timer: ReturnType<typeof setTimeout>;
}

const parked: Parked[] = [];

/** A warm thread when one is parked, else a new one. */
export function acquireHost(): WorkerHost {
  const p = parked.pop();
  if (p === undefined) return new WorkerHost();
  clearTimeout(p.timer);
  readerThreads.parked--;
  p.host.onExit = null;
  p.host.hold(true);
  return p.host;
}

/** Parks `host` for a next pass when it is idle and sound, else ends it. */
export async function releaseHost(host: WorkerHost): Promise<void> {
  const linger = lingerMs();
  if (!host.reusable() || linger === 0 || parked.length >= availableParallelism()) return host.close();
  const entry: Parked = {
    host,
    timer: setTimeout(() => void unpark(entry).then(() => host.close()), linger),
  };
  entry.timer.unref();
  host.hold(false);
  parked.push(entry);
  readerThreads.parked++;
  // A parked thread that dies (it should not) leaves the pool.
  host.onExit = () => void unpark(entry);
}

async function unpark(entry: Parked): Promise<void> {
  const i = parked.indexOf(entry);
  if (i < 0) return;
  parked.splice(i, 1);
  clearTimeout(entry.timer);
  readerThreads.parked--;
}
