/**
 * The measured memory rule: the pipeline as written, projected from its profile (src/model/memory.ts:
 * the process's measured base and working memory, every buffer full of elements sized on the
 * heap: the upper bound, as the memory budget is checked), past V8's heap limit. A profile's short window rarely fills a large shuffle buffer or a
 * cache, so the run that would crash is the long one after it: the warning comes first. The
 * finding sits on the operator that holds the largest part and names it with its bytes.
 */
import type { GraphOp, PipelineGraph } from '../graph/types';
import type { Profile } from '../../shared/profile';
import { projectPeakMemory } from '../../model';
import { formatBytes } from '../../shared/words';
import type { LintFinding } from './rules';

export const MEMORY_MEASURED_RULES: Record<string, string> = {
  'plumber/memory-past-heap-limit': "the pipeline's projected peak memory (its buffers and caches full) is past V8's heap limit (projected from the profiled run)",
};

/** One profiled pipeline: its graph, its profile and the profile's operators joined to the graph's. */
export interface MemoryView {
  graph: PipelineGraph;
  profile: Profile | undefined;
  byProfileId: Map<string, GraphOp>;
}

/** The finding for a pipeline whose projected peak passes the heap limit, on the operator holding the most. */
export function memoryLints(v: MemoryView): LintFinding[] {
  const profile = v.profile;
  const limit = profile?.machine.heapLimitBytes;
  if (!profile || profile.error || limit === undefined) return [];
  // The upper bound, every buffer full: a buffer its consumer drains in steady running fills when
  // the consumer pauses (an evaluation, a checkpoint), and a crash needs only one such moment.
  // A second projection for the expected peak only when there is a warning to word.
  const project = (fill?: 'full'): ReturnType<typeof projectPeakMemory> => {
    try {
      return projectPeakMemory(profile, {}, undefined, fill);
    } catch {
      return undefined;
    }
  };
  const m = project('full');
  if (!m || m.peakBytes <= limit) return [];
  const located = m.parts.map((p) => ({ p, op: v.byProfileId.get(p.opId) })).find((x) => x.op !== undefined);
  if (!located || !located.op) return [];
  const { p, op } = located;
  const what = p.elements !== undefined ? `${p.what} of ${op.label} (${p.elements.toLocaleString('en-US')} elements)` : `${p.what} of ${op.label}`;
  const expected = project();
  const steady = expected && expected.peakBytes < m.peakBytes ? ` (≈ ${formatBytes(expected.peakBytes)} expected while its consumer keeps up)` : '';
  const message = `Projected peak memory with every buffer full ≈ ${formatBytes(m.peakBytes)}${steady} is past V8's heap limit of ${formatBytes(limit)}: the ${what} holds ≈ ${formatBytes(p.bytes)} once full (projected from element sizes measured in the profiled run). The process would run out of memory: shrink it, or raise --max-old-space-size.`;
  return [{ rule: 'plumber/memory-past-heap-limit', severity: 'warning', message, op, related: [] }];
}
