/**
 * `plumber plan`'s memory lines: the projected peak as written and with the plan, the largest
 * parts, and the budget the plan keeps within. Projected, never measured: they say so.
 */
import type { Analysis, MemoryProjection, Plan } from '../shared/analysis';
import { formatBytes } from '../shared/words';

function line(label: string, m: MemoryProjection): string {
  const parts = m.parts
    .slice(0, 3)
    .map((p) => `${p.what} ${formatBytes(p.bytes)}`)
    .join(', ');
  return `${label}≈ ${formatBytes(m.peakBytes)} at peak (projected)${parts ? `: ${parts}` : ''}; budget ${formatBytes(m.budgetBytes)}`;
}

/** "Memory: ≈ 410 MB at peak (projected): shuffle buffer 320 MB; budget 2 GB", as written and with the plan; none where nothing was projected. */
export function memoryLines(analysis: Analysis, plan: Plan): string[] {
  const out: string[] = [];
  if (analysis.memory) out.push(line('Memory as written: ', analysis.memory));
  if (plan.memory && plan.changes.length > 0) out.push(line('Memory with the plan: ', plan.memory));
  const limit = analysis.memory?.heapLimitBytes;
  if (analysis.memory && limit !== undefined && analysis.memory.peakBytes > limit) out.push(`Warning: the projected peak is past V8's heap limit of ${formatBytes(limit)}: the pipeline may run out of memory.`);
  return out;
}
