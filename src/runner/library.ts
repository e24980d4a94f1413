/**
 * What the copy of plumber-data the user's pipeline loads says about itself, through its public
 * exports: the runner ships its own copy, and the two may be different versions. A copy that does
 * not export a fact leaves it unsaid (undefined), and the model falls back to its own figure.
 */
import { createRequire } from 'node:module';
import type { Machine } from '../shared/profile';
import { requireUnhooked } from './unhooked';

/** The user's copy of plumber-data, as seen from the pipeline's file; undefined when none resolves. */
function userLibrary(file: string): Record<string, unknown> | undefined {
  try {
    return createRequire(file)('plumber-data') as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * The user's copy of plumber-data for what it says about itself, after the pipeline has loaded:
 * the pipeline's own module when it loaded the library, else loaded past the TypeScript loader's
 * hook, so a pipeline that does not use the library (a Node-streams chain) runs as on its own
 * (unhooked.ts says why).
 */
function loadedLibrary(file: string): Record<string, unknown> | undefined {
  try {
    const resolved = createRequire(file).resolve('plumber-data');
    return (require.cache[resolved]?.exports ?? requireUnhooked(resolved)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The library's per-thread CPU clock (`cpuClockKind()`), when the user's copy of plumber-data exports one. */
export function libraryCpuClock(file: string): Machine['cpuClock'] | undefined {
  const lib = loadedLibrary(file);
  if (lib === undefined) return undefined;
  try {
    const source = lib.cpuClockKind ?? lib.cpuClock;
    const c = typeof source === 'function' ? (source as () => unknown)() : source;
    return c === 'threadCpuUsage' || c === 'schedstat' || c === 'wall' ? c : undefined;
  } catch {
    return undefined;
  }
}

/** How the user's copy sizes worker-thread tasks (its tracing contract's `WORKER_CHUNKING`), when it says. */
export function libraryWorkerChunking(file: string): Machine['workerChunking'] {
  const c = loadedLibrary(file)?.WORKER_CHUNKING as Record<string, unknown> | undefined;
  if (c === null || typeof c !== 'object') return undefined;
  const { overheadShare, maxTaskSeconds, maxTaskBytes, maxGroup } = c;
  const positive = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x > 0;
  if (!positive(overheadShare) || !positive(maxTaskSeconds) || !positive(maxTaskBytes) || !positive(maxGroup) || !Number.isInteger(maxGroup)) return undefined;
  return { overheadShare, maxTaskSeconds, maxTaskBytes, maxGroup };
}

/** Sets the user's copy's global seed (`setSeed`) before the pipeline module loads; a copy without one is left as it is. */
export function seedLibrary(file: string, seed: number): void {
  const set = userLibrary(file)?.setSeed;
  if (typeof set === 'function') (set as (s: number) => void)(seed);
}
