/**
 * `plumber plan`'s memory lines: the projected peak as written and with the plan, the largest
 * parts, and the budget the plan keeps within. Projected, never measured: they say so.
 */
import type { Analysis, Plan } from '../shared/analysis';
import { peakMemoryWords } from '../shared/memoryWords';
import { formatBytes } from '../shared/words';

/** "Memory as written: ≈ 410 MB at peak (projected): shuffle buffer 320 MB; budget 2 GB", and with the plan; none where nothing was projected. */
export function memoryLines(analysis: Analysis, plan: Plan): string[] {
  const out: string[] = [];
  const budget = (b: number) => `; budget ${formatBytes(b)}`;
  if (analysis.memory) out.push(`Memory as written: ${peakMemoryWords(analysis.memory)}${budget(analysis.memory.budgetBytes)}`);
  if (plan.memory && plan.changes.length > 0) out.push(`Memory with the plan: ${peakMemoryWords(plan.memory)}${budget(plan.memory.budgetBytes)}`);
  const limit = analysis.memory?.heapLimitBytes;
  if (analysis.memory && limit !== undefined && analysis.memory.peakBytes > limit) out.push(`Warning: the projected peak is past V8's heap limit of ${formatBytes(limit)}: the pipeline may run out of memory.`);
  return out;
}
