/**
 * Peak memory in words, for every surface (hover, tree, report, CLI): always marked "projected",
 * since the model computes it from element sizes the run measured (src/model/memory.ts).
 */
import type { MemoryProjection } from './analysis';
import { formatBytes } from './words';

/** "≈ 410 MB at peak (projected): shuffle buffer 320 MB, prefetch buffer 12 MB". */
export function peakMemoryWords(m: MemoryProjection): string {
  const parts = m.parts
    .slice(0, 3)
    .map((p) => `${p.what} ${formatBytes(p.bytes)}`)
    .join(', ');
  return `≈ ${formatBytes(m.peakBytes)} at peak (projected)${parts ? `: ${parts}` : ''}`;
}

/** What one operator holds at the peak: "shuffle buffer ≈ 320 MB (10,000 elements) of ≈ 410 MB at peak (projected)"; undefined when it holds nothing. */
export function opMemoryWords(m: MemoryProjection | undefined, opId: string): string | undefined {
  const own = m?.parts.filter((p) => p.opId === opId) ?? [];
  if (!m || own.length === 0) return undefined;
  const held = own.map((p) => `${p.what} ≈ ${formatBytes(p.bytes)}${p.elements !== undefined ? ` (${p.elements.toLocaleString('en-US')} elements)` : ''}`).join(', ');
  return `${held} of ≈ ${formatBytes(m.peakBytes)} at peak (projected)`;
}
