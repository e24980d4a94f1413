/**
 * What the consumer (a map placed on a cluster) and the workers say to each other through Redis.
 *
 * Jobs go through a BullMQ queue named after the cluster, one job per element, with the id
 * `<run>-<index>`: BullMQ ignores a second add of the same id, and the consumer keeps one result
 * per index, so a job re-run after its worker died (stalled-job recovery) is never delivered twice.
 *
 * Results do not travel as BullMQ return values through the queue's event stream: that stream is
 * shared by every run, trimmed to a bounded length, and a consumer that falls behind would lose
 * events and wait forever. Each worker instead pushes its result to the run's own list, which the
 * consumer pops, and which goes away with the run. Elements and results are v8-serialised (the
 * structured clone of worker threads), so typed arrays, Maps, Sets and Dates arrive as they left.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { deserialize, serialize } from 'node:v8';

let host: string | undefined;

/**
 * This host as workers and consumers name it: its name and, where Linux gives one, its boot id.
 * Two containers or VMs may share a hostname; they do not share a boot id of one kernel, and
 * processes under one kernel share its cores.
 */
export function hostId(): string {
  if (host !== undefined) return host;
  let boot = '';
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().slice(0, 8);
  } catch {
    // No /proc (macOS, Windows): the hostname alone.
  }
  host = boot === '' ? hostname() : `${hostname()}/${boot}`;
  return host;
}

/** BullMQ's key prefix for every cluster queue. */
export const PREFIX = 'plumber';

/** The run's result list: workers push, the consumer pops. */
export function resultsKey(name: string, run: string): string {
  return `${PREFIX}:${name}:results:${run}`;
}

/**
 * The run's state: `RUN_ALIVE` while its consumer runs (it refreshes the expiry), `RUN_ENDED` once
 * it stopped (kept `RUN_ENDED_TTL_MS`, for the jobs still held by workers). Workers skip the jobs
 * of an ended run. A missing key says nothing: it lapsed while the consumer was paused, or Redis
 * restarted without persistence; workers still push results then, and the consumer restores the key.
 */
export function runKey(name: string, run: string): string {
  return `${PREFIX}:${name}:run:${run}`;
}

export const RUN_ALIVE = '1';
export const RUN_ENDED = 'ended';

/** The run key's expiry, refreshed every third of it: a consumer that died leaves nothing behind for long. */
export const RUN_TTL_MS = 30_000;

/** How long an ended run's key stays: longer than a job a worker held at the end takes to finish or stall. */
export const RUN_ENDED_TTL_MS = 10 * 60_000;

/** How long a run's result list outlives its last push: results of a consumer that died do not stay for ever. */
export const RESULTS_TTL_MS = 10 * 60_000;

/** BullMQ's hash of one job (its id is `<run>-<index>`). */
export function jobKey(name: string, jobId: string): string {
  return `${PREFIX}:${name}:${jobId}`;
}

/**
 * A job whose worker died (or stopped renewing its lock) is a suspect: it runs again, alone on
 * its worker, so that a death then is its own doing and not a neighbour's. A suspect whose
 * worker died this many times while running it alone is not run again: its element is reported
 * as the cause, so one element that kills its worker cannot take the whole fleet down. Two, not
 * one: a worker may be killed for other reasons.
 */
export const MAX_ALONE_DEATHS = 2;

/** The field of a job's hash that counts its runs alone (see MAX_ALONE_DEATHS). */
export const ALONE_FIELD = 'plumberAlone';

export type Mode = 'map' | 'filter' | 'flatMap';

/** A job's data (BullMQ stores it as JSON, hence the element as base64 of its v8 serialisation). */
export interface JobData {
  run: string;
  index: number;
  mode: Mode;
  exportName: string;
  /** The module's file name as the consumer knows it, to tell modules apart when a worker serves several. */
  module?: string;
  /** v8.serialize(element), base64. */
  x: string;
  /** The op's `timeoutMs`: the worker gives up on the fn after this long (the worker's own `--timeout-ms` may be lower). */
  timeoutMs?: number;
}

/** A job as the consumer adds it: BullMQ's name, data and options. */
export interface Job {
  name: string;
  data: JobData;
  opts: { jobId: string; removeOnComplete: boolean; removeOnFail: boolean; attempts: number; backoff: { type: 'fixed'; delay: number } };
}

/**
 * The host's clock and idle CPU from /proc/uptime: [seconds since boot, idle seconds summed over
 * its cores]. Undefined where there is no /proc. Two readings give the cores the host left idle
 * in between, and so what other work on it takes.
 */
export function hostClock(): [number, number] | undefined {
  try {
    const [up, idle] = readFileSync('/proc/uptime', 'utf8').trim().split(/\s+/).map(Number);
    return Number.isFinite(up) && Number.isFinite(idle) ? [up, idle] : undefined;
  } catch {
    return undefined;
  }
}

/** The worker that ran a job, as the consumer learns about it with each result. */
export interface WorkerStamp {
  /** `host:pid`. */
  id: string;
  /** Jobs the worker runs at once (`--concurrency`). */
  concurrency: number;
  /** The worker host's cores. */
  cores: number;
  /** The worker's host (`hostId()`): workers of one host share its cores. Absent from workers of older versions (then the host part of `id`). */
  host?: string;
  /** The host's `hostClock()` when the stamp was made (read at most every 100 ms); absent off Linux and from older workers. */
  hostClock?: [number, number];
  /** The worker process's CPU seconds (user + system) since it started. */
  cpuSeconds: number;
  /** Seconds since the worker started, on its own clock. */
  uptimeSeconds: number;
  /**
   * Jobs the worker has completed, and the seconds their slots were held in all (from BullMQ's
   * `processedOn` to `finishedOn`: the fn, the job's Redis round trips, completing it and taking
   * the next). Cumulative, so the consumer counts the difference between two stamps.
   */
  jobsDone: number;
  slotSeconds: number;
}

/** One result, as pushed to the run's list. Exactly one of `value`, `error` is meaningful. */
export interface ResultRecord {
  index: number;
  ok: boolean;
  /** map: the fn's result; filter: its truthiness; flatMap: the elements as an array. */
  value?: unknown;
  /** The fn's error (or why the fn could not be called), as plain data. */
  error?: { name: string; message: string; stack?: string };
  /** Seconds the fn took in the worker (wall: awaited work counts). */
  serviceSeconds: number;
  /** Milliseconds the job waited in the queue: from its add to the worker taking it (BullMQ's `timestamp` and `processedOn`). */
  queueWaitMs: number;
  worker: WorkerStamp;
}

export function encodeElement(x: unknown): Buffer {
  return serialize(x);
}

export function decodeElement(b: Buffer): unknown {
  return deserialize(b);
}

export function encodeResult(r: ResultRecord): Buffer {
  return serialize(r);
}

export function decodeResult(b: Buffer): ResultRecord {
  return deserialize(b) as ResultRecord;
}
