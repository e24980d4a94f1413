/**
 * Hand-built profiles for the model's tests. Each op is described by what it costs per call; the
 * builder fills in the counters the library would record for a run that delivered `rootElements`
 * elements, working upstream from the root (batch(n) pulls n per output, filter(keep) pulls
 * 1/keep, flatMap(out) pulls 1/out, shard(n) pulls n, a mixture takes each input's share), so tests
 * can compute the right answers by hand.
 *
 * Counters follow tracing.ts: `selfSeconds` is main-thread own time (the fn's sync time plus
 * bookkeeping per produced element), `workerCpuSeconds` is worker CPU, `dispatchSeconds` is the
 * main thread's cost of handing tasks to workers, `asyncLatencySeconds`/`asyncCalls` cover calls
 * that returned a promise.
 */
import { newCounters, type KnobOverride, type OpKind, type OpKnobs, type Placement } from '../../../src/data/tracing';
import { PROFILE_VERSION, type Machine, type MoveCost, type OpProfile, type Profile } from '../../../src/shared/profile';

export interface OpSpec {
  kind: OpKind;
  fnName?: string;
  /** Main-thread seconds of the fn per call (sync part). */
  self?: number;
  /** Main-thread seconds per produced element of an op without a fn (a generator source's own work). */
  ownPerElement?: number;
  /** Worker CPU seconds per call (placement 'worker'). */
  worker?: number;
  /** Main-thread seconds per worker task. */
  dispatch?: number;
  /** Seconds from call to settle for an awaiting fn (counted as async calls, as map's engine does). */
  latency?: number;
  /** Sources that await without counting calls (`from` an async iterable): seconds its consumer waits per element. */
  wait?: number;
  parallelism?: number;
  placement?: Placement;
  /** The fn can be imported from here (a worker can run it). */
  module?: boolean;
  random?: boolean;
  /** filter: fraction kept. */
  keep?: number;
  /** flatMap: elements out per element in; interleave: elements per inner dataset. */
  out?: number;
  /** Indices of the ops it pulls from (default: the previous op; none for the first). */
  inputs?: number[];
  /** Index of the interleave or flatMap whose inner datasets it is built in (`parentId`). */
  parent?: number;
  cycleLength?: number;
  randomObserved?: boolean;
  moveCost?: MoveCost;
  batchSize?: number;
  bufferSize?: number;
  count?: number;
  cardinality?: number;
  /** Bytes of each produced element. */
  bytes?: number;
  /** What one produced element keeps alive, as the runner measured it on the heap of a sample (`held`)… */
  heapBytes?: number;
  /** …whose byte estimate was this per element (default: `bytes`). */
  heldSizeBytes?: number;
  /** repeat: the elements of a pass of its input the run saw end (`counters.passElements`). */
  passElements?: number;
  /** lines: bytes of the files it matched (`counters.sourceBytes`). */
  sourceBytes?: number;
  /** Bytes read from disk per produced element. */
  diskBytes?: number;
  overridden?: boolean;
  /** sampleFromDatasets / chooseFromDatasets: the share of elements taken from each data input, in input order. */
  shares?: number[];
  /** sampleFromDatasets: the weights knob the library records. */
  weights?: number[];
  /** shard(numShards, shardIndex): it pulls numShards elements per element it hands on. */
  numShards?: number;
  shardIndex?: number;
  /** window, rebatch, paddedBatch, bucketBySequenceLength, groupByWindow: input elements per output, as measured. */
  pullsPerOutput?: number;
  /** paddedBatch / bucketBySequenceLength: positions per input element (padding included) and the padded share of them. */
  positionsPerElement?: number;
  paddedShare?: number;
}

export interface RunSpec {
  /** Root elements delivered in the window. */
  rootElements: number;
  /** Measured root rate; the window's seconds follow from it. */
  rate: number;
  /** Main-thread CPU no operator claimed, seconds over the window. */
  unclaimedMainSeconds?: number;
  /** CPU on other threads (libuv), seconds over the window. */
  otherCpuSeconds?: number;
  overrides?: Record<string, KnobOverride>;
  /** Cores the process could get during the window (`run.availableCores`). */
  availableCores?: number;
  /** Share of a core the main thread got while runnable (`run.mainThreadShare`). */
  mainThreadShare?: number;
}

export class ProfileBuilder {
  private readonly specs: OpSpec[] = [];
  machine: Machine;

  constructor(
    machine: Partial<Machine> = {},
    /** Main-thread bookkeeping seconds per produced element, for every op. */
    private readonly bookkeeping = 0,
  ) {
    this.machine = {
      cores: 2,
      memoryTotalBytes: 8e9,
      memoryFreeBytes: 4e9,
      nodeVersion: 'v20.20.0',
      platform: 'linux',
      arch: 'x64',
      cpuModel: 'test',
      libuvThreads: 4,
      cpuClock: 'schedstat',
      ...machine,
    };
  }

  /** Append an op that pulls from the previous one. */
  op(spec: OpSpec): this {
    this.specs.push(spec);
    return this;
  }

  range(cardinality?: number): this {
    return this.op({ kind: 'range', cardinality });
  }
  map(fnName: string, spec: Omit<OpSpec, 'kind' | 'fnName'> = {}): this {
    return this.op({ kind: 'map', fnName, ...spec });
  }
  batch(n: number): this {
    return this.op({ kind: 'batch', batchSize: n });
  }
  prefetch(n: number): this {
    return this.op({ kind: 'prefetch', bufferSize: n });
  }

  /** The id the i-th op (0-based) gets. */
  static id(i: number): string {
    return `${10 + i}:4`;
  }

  build(run: RunSpec): Profile {
    const n = this.specs.length;
    const inputsOf = (i: number): number[] => this.specs[i].inputs ?? (i === 0 ? [] : [i - 1]);
    const produced: number[] = new Array<number>(n).fill(0);
    const pulled: number[] = new Array<number>(n).fill(0);
    const known = new Array<boolean>(n).fill(false);
    produced[n - 1] = run.rootElements;
    known[n - 1] = true;
    // Upstream from the root: each op pulls what its output needs from its inputs; the last op of
    // an inner dataset chain (nothing pulls from it) produces what its parent produces.
    for (let i = n - 1; i >= 0; i--) {
      const s = this.specs[i];
      if (!known[i] && s.parent !== undefined) produced[i] = produced[s.parent];
      let ratio = 1;
      if (s.pullsPerOutput !== undefined) ratio = s.pullsPerOutput;
      else if (s.kind === 'batch' || s.kind === 'paddedBatch' || s.kind === 'rebatch') ratio = s.batchSize ?? 1;
      else if (s.kind === 'filter' || s.kind === 'ignoreErrors') ratio = 1 / (s.keep ?? 1);
      else if (s.kind === 'flatMap' || s.kind === 'interleave') ratio = 1 / (s.out ?? 1);
      else if (s.kind === 'shard') ratio = s.numShards ?? 1;
      const ins = inputsOf(i);
      pulled[i] = ins.length === 0 ? 0 : Math.round(produced[i] * ratio);
      // A mixture takes each element from one data input, by its share; chooseFromDatasets also
      // pulls one choice per element from its last input.
      const mixture = s.kind === 'sampleFromDatasets' || s.kind === 'chooseFromDatasets';
      const data = mixture && s.kind === 'chooseFromDatasets' ? ins.slice(0, -1) : ins;
      ins.forEach((j) => {
        const k = data.indexOf(j);
        produced[j] = mixture && k >= 0 ? Math.round(pulled[i] * (s.shares?.[k] ?? 1 / data.length)) : pulled[i];
        known[j] = true;
      });
    }
    const seconds = run.rootElements / run.rate;
    let claimedMain = 0;
    let worker = 0;
    const ops: OpProfile[] = this.specs.map((s, i) => {
      const c = newCounters();
      const fn = s.kind === 'map' || s.kind === 'filter' || s.kind === 'flatMap';
      const placement: Placement = s.placement ?? (s.kind === 'files' ? 'libuv' : 'main');
      c.produced = produced[i];
      c.pulled = pulled[i];
      const calls = fn || s.kind === 'interleave' ? pulled[i] : s.latency !== undefined ? produced[i] : 0;
      c.calls = calls;
      c.selfSeconds = calls * (s.self ?? 0) + produced[i] * ((s.ownPerElement ?? 0) + this.bookkeeping);
      if (placement === 'worker') {
        // A worker map's own main-thread time all goes to dispatchSeconds.
        c.workerCpuSeconds = calls * (s.worker ?? 0);
        c.dispatchSeconds = calls * (s.dispatch ?? 60e-6) + c.selfSeconds;
        c.selfSeconds = 0;
      }
      // What the consumer waited on this op: its own sync time plus, for a source, its waits.
      c.waitSeconds = c.selfSeconds + produced[i] * (s.wait ?? 0);
      if (s.latency !== undefined) {
        c.asyncCalls = calls;
        c.asyncLatencySeconds = calls * s.latency;
      }
      c.bytesProduced = produced[i] * (s.bytes ?? 0);
      c.diskBytesRead = produced[i] * (s.diskBytes ?? 0);
      c.filesRead = s.kind === 'files' ? produced[i] : 0;
      if (s.passElements !== undefined) c.passElements = s.passElements;
      if (s.sourceBytes !== undefined) c.sourceBytes = s.sourceBytes;
      if (s.kind === 'ignoreErrors') c.errorsSkipped = pulled[i] - produced[i];
      if (s.positionsPerElement !== undefined) {
        c.totalPositions = pulled[i] * s.positionsPerElement;
        c.paddedPositions = Math.round(c.totalPositions * (s.paddedShare ?? 0));
      }
      claimedMain += c.selfSeconds + c.dispatchSeconds;
      worker += c.workerCpuSeconds;
      const knobs: OpKnobs = {};
      if (s.parallelism !== undefined) {
        knobs.parallelism = s.parallelism;
        knobs.resolvedParallelism = s.parallelism;
      }
      if (s.batchSize !== undefined) knobs.batchSize = s.batchSize;
      if (s.bufferSize !== undefined) knobs.bufferSize = s.bufferSize;
      if (s.count !== undefined) knobs.count = s.count;
      if (s.kind === 'interleave') knobs.cycleLength = s.cycleLength ?? 2;
      if (s.kind === 'cache') knobs.cacheMemory = true;
      if (s.numShards !== undefined) {
        knobs.numShards = s.numShards;
        knobs.shardIndex = s.shardIndex ?? 0;
      }
      if (s.weights !== undefined) knobs.weights = s.weights;
      return {
        id: ProfileBuilder.id(i),
        kind: s.kind,
        site: { file: '/work/pipeline.ts', line: 10 + i, column: 4 },
        inputs: inputsOf(i).map((j) => ProfileBuilder.id(j)),
        parentId: s.parent !== undefined ? ProfileBuilder.id(s.parent) : undefined,
        randomObserved: s.randomObserved,
        moveCost: s.moveCost,
        ...(s.heapBytes !== undefined ? { held: { heapBytes: s.heapBytes, sizeBytes: s.heldSizeBytes ?? s.bytes ?? 0 } } : {}),
        fnName: s.fnName,
        fnAsync: s.latency !== undefined ? true : undefined,
        fnModule: s.module ? { file: '/work/transforms.ts', exportName: s.fnName ?? 'fn' } : undefined,
        placement,
        knobs,
        random: s.random ?? s.kind === 'shuffle',
        cardinality: s.cardinality,
        overridden: s.overridden,
        counters: c,
      };
    });
    const mainThreadCpuSeconds = claimedMain + (run.unclaimedMainSeconds ?? 0);
    return {
      version: PROFILE_VERSION,
      pipeline: { file: '/work/pipeline.ts', exportName: 'train', rootId: ProfileBuilder.id(n - 1) },
      machine: this.machine,
      run: {
        startedAt: '2026-11-29T00:00:00.000Z',
        elements: run.rootElements,
        seconds,
        warmupElements: 0,
        warmupSeconds: 0,
        converged: true,
        endReason: 'converged',
        rateEstimates: [run.rate],
        availableCores: run.availableCores,
        ...(run.mainThreadShare !== undefined ? { mainThreadShare: run.mainThreadShare } : {}),
        overrides: run.overrides ?? {},
        mainThreadCpuSeconds,
        processCpuSeconds: mainThreadCpuSeconds + worker + (run.otherCpuSeconds ?? 0),
        peakRssBytes: 1e8,
      },
      ops,
    };
  }
}
