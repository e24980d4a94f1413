/**
 * The worker thread that times fns loaded from their modules (a bundle of its own,
 * dist/runner/timer.js; see workerTimes.ts). It inherits the runner's flags, tsx's loader among
 * them, so it loads TypeScript as plumber-data's own workers do. Messages: a `TimerRequest` in, a
 * `TimerReply` out.
 *
 * The fn gets what a worker of the library would give it: its inputs rebuilt after the copy (the
 * library's crossing rules, with the Batch class of the copy of plumber-data the fn's module
 * loads, and tensors of the tfjs it loads), and a context whose generator is that copy's `Rng` on the library's per-element seed.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { parentPort } from 'node:worker_threads';
import { type BatchMaker, exportedMember, restoreAll, tensorMakerFor } from '../../data/tracing';
import { cpuPerElementWhile, usedFromNow, WARM_ROUND_MAX_MS, WARM_ROUND_MIN_MS, type TimerReply, type TimerRequest } from './timing';
import { processCpuSeconds as cpu } from '../machine';
import { ThreadMemoryReader } from '../workerRss';

type Fn = (x: unknown, ctx: unknown) => unknown;
type RngClass = new (seed: number) => unknown;

/** Warm-up rounds in a block: a fn has settled when a block costs no less than 3% under the one before. */
const SETTLE_BLOCK = 3;

/** The library's generator, from the copy of plumber-data the fn's module would load. */
function rngClass(file: string): RngClass {
  try {
    return (createRequire(file)('plumber-data') as { Rng: RngClass }).Rng;
  } catch {
    return class {
      constructor() {
        throw new Error('plumber-data is not installed next to ' + file);
      }
    };
  }
}

/** Makes Batches of the class the copy of plumber-data next to `file` exports, loaded on first use. */
function batchMaker(file: string): BatchMaker {
  let Batch: (new (data: unknown, shape: number[]) => unknown) | undefined;
  return (data, shape) => {
    Batch ??= (createRequire(file)('plumber-data') as { Batch: new (data: unknown, shape: number[]) => unknown }).Batch;
    return new Batch(data, shape);
  };
}

async function load(file: string): Promise<Record<string, unknown>> {
  try {
    return require(file) as Record<string, unknown>;
  } catch (e) {
    const code = (e as { code?: unknown } | null)?.code;
    if (code === 'ERR_REQUIRE_ESM' || code === 'ERR_REQUIRE_ASYNC_MODULE' || code === 'ERR_UNKNOWN_FILE_EXTENSION') return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    throw e;
  }
}

async function exportedFn(m: TimerRequest): Promise<Fn> {
  const mod = await load(m.file);
  const fn = exportedMember(mod, m.exportName);
  if (typeof fn !== 'function') throw new Error('no exported function ' + m.exportName);
  return fn as Fn;
}

/**
 * Times the fn on the request's inputs. The time given is CPU the thread gets, not wall time:
 * beside other work on the cores a thread gets a share of one, and a wall-clock limit would give
 * a fn the less CPU to settle in the busier the machine. Wall time counts too, as `usedFromNow`
 * says, for calls that wait.
 */
function time(m: TimerRequest, fn: Fn, ctxs: unknown[], memory: ThreadMemoryReader): TimerReply {
  const n = m.inputs.length;
  const used = usedFromNow();
  const round = (): void => {
    for (let i = 0; i < n; i++) fn(m.inputs[i], ctxs[i]);
  };
  // Warm-up: the main thread's fn ran all window long, hot; a fresh copy here is slower until V8
  // optimises it (and the module's caches fill). Steady state is what a worker pool runs at, so
  // warm up until rounds of calls stop getting cheaper, or until most of the time is gone: the
  // last SETTLE_BLOCK rounds cost, a call, no less than 3% under the SETTLE_BLOCK before them (a
  // fall under 1% a round). Blocks, not each round against the cheapest so far: on a busy machine
  // a round's cost scatters by 5–8%, so a lucky round stands for a fall that is noise, and rounds
  // in a row that miss it end the warm-up of a fn still falling 4% a round. A round lasts a
  // fifteenth of the time given, within WARM_ROUND_MIN_MS and WARM_ROUND_MAX_MS: rounds too short
  // for the noise of a fn's fall in cost end the warm-up early and price a cold fn. The round is
  // time used as the time given is: a fn warms with the CPU it uses, so a round of wall time on a
  // busy machine holds a fraction of the calls and of the fall, and ends the warm-up cold. A fn
  // sent again (it had not settled) goes on from where its last warm-up stopped: this thread keeps
  // what V8 compiled and what the module cached.
  const warmFor = m.seconds * 0.7;
  const roundSeconds = Math.min(WARM_ROUND_MAX_MS, Math.max(WARM_ROUND_MIN_MS, (m.seconds * 1000) / 15)) / 1000;
  const rounds: { cpu: number; calls: number }[] = [];
  // CPU a call over rounds [from, to).
  const perCall = (from: number, to: number): number => {
    let c = 0;
    let k = 0;
    for (let i = from; i < to; i++) {
      c += rounds[i]!.cpu;
      k += rounds[i]!.calls;
    }
    return c / k;
  };
  let settled = false;
  while (!settled && used() < warmFor) {
    const c0 = cpu();
    const inRound = usedFromNow();
    let calls = 0;
    do {
      round();
      calls += n;
      memory.poll();
    } while (inRound() < roundSeconds);
    rounds.push({ cpu: cpu() - c0, calls });
    const k = rounds.length;
    settled = k >= 2 * SETTLE_BLOCK && perCall(k - SETTLE_BLOCK, k) >= 0.97 * perCall(k - 2 * SETTLE_BLOCK, k - SETTLE_BLOCK);
  }
  // A warm-up that ran out of time before the calls stopped getting cheaper measured a cold fn
  // (and the compiler threads optimising it): no figure is better than a biased one.
  if (!settled) return { unsettled: true, seconds: used(), memory: memory.report() };
  // Timed as on the main thread (`cpuPerElementWhile`), within the time given.
  const cpuPerCall = cpuPerElementWhile(n, round, () => {
    memory.poll();
    return used() < m.seconds;
  });
  return { cpuPerCall, seconds: used(), memory: memory.report() };
}

parentPort?.on('message', async (m: TimerRequest) => {
  // What the thread holds with this fn loaded, and while it runs (workerRss.ts).
  const memory = new ThreadMemoryReader();
  try {
    const fn = await exportedFn(m);
    const Rng = rngClass(m.file);
    restoreAll(m.inputs, m.marks, batchMaker(m.file), { tensor: tensorMakerFor(m.file), numbers: m.numbers });
    const ctxs = m.inputs.map((_, i) => {
      let r: unknown;
      return {
        index: m.indices[i],
        get rng() {
          return (r ??= new Rng(m.seeds[i]!));
        },
        signal: new AbortController().signal,
      };
    });
    memory.loaded();
    parentPort!.postMessage(time(m, fn, ctxs, memory) satisfies TimerReply);
  } catch (e) {
    parentPort!.postMessage({ error: String((e as Error | undefined)?.message || e) } satisfies TimerReply);
  }
});
