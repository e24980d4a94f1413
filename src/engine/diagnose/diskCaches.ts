/**
 * Disk caches during a diagnosis. A plan's `cache(path)` runs as an override naming a file under
 * the cache directory; plumber-data reads that file when it exists and writes it (under a
 * temporary name, renamed into place only when a pass completes) when it does not. So that every
 * run measures its own first pass and then reads back what it wrote (the second epoch, which the
 * runner's window waits for), the file is removed before each run that names it, and after the
 * diagnosis: a cache left from a run would be read, stale, by the next run or by the user's
 * training. Only files the plan named (`*.plumbercache`) are removed, never a cache the user wrote.
 */
import { unlink } from 'node:fs/promises';
import type { Overrides, Profile } from '../../shared/profile';
import type { DiagnoseInput, RunBudget, RunPurpose } from './input';

/** The extension of the disk caches the model names (src/model/diskCache.ts). */
const EXTENSION = '.plumbercache';

/** Absolute paths of the disk caches `overrides` insert. */
export function diskCachePaths(overrides: Overrides): string[] {
  const out: string[] = [];
  for (const o of Object.values(overrides)) {
    if (typeof o.cache === 'string' && o.cache !== 'memory' && o.cache.endsWith(EXTENSION)) out.push(o.cache);
  }
  return out;
}

async function remove(paths: Iterable<string>): Promise<void> {
  for (const p of paths) await unlink(p).catch(() => undefined);
}

/**
 * `input` whose runs start without the disk caches they name, and a `cleanup` that removes every
 * one a run named.
 */
export function freshDiskCaches(input: DiagnoseInput): { input: DiagnoseInput; cleanup: () => Promise<void> } {
  const named = new Set<string>();
  const run = async (overrides: Overrides, purpose: RunPurpose, budget?: RunBudget): Promise<Profile> => {
    const paths = diskCachePaths(overrides);
    for (const p of paths) named.add(p);
    await remove(paths);
    return input.run(overrides, purpose, budget);
  };
  return { input: { ...input, run }, cleanup: () => remove(named) };
}
