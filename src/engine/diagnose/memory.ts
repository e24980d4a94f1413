/**
 * The plan's projected peak memory as the diagnosis leaves it: verification may keep fewer
 * changes than the model's plan held, and the last pass planned from a run that already had the
 * first pass's changes, so the projection is made again for the changes kept, from the first run
 * (the pipeline as written, which measured what the projection needs).
 */
import type { MemoryProjection, ModelOptions } from '../../shared/analysis';
import { projectPeakMemory } from '../../model';
import type { Diagnosis } from './input';

/** `{ memory }` for the plan's overrides on the first run; nothing where it cannot be projected. */
export function keptMemory(d: Diagnosis, options: ModelOptions): { memory?: MemoryProjection } {
  try {
    const memory = projectPeakMemory(d.first, d.plan.overrides, options);
    return memory ? { memory } : {};
  } catch {
    return {};
  }
}
