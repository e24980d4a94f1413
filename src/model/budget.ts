/**
 * The memory budget bounds a plan's projected peak (src/model/memory.ts) at its upper bound, every
 * buffer full (the expected peak counts a prefetch below the bottleneck near empty): a change that would take
 * the pipeline past it is lowered (fewer calls in flight or worker threads, a smaller prefetch) to
 * the most that fits, or left out (a cache, a move) — the one whose removal lowers the peak most
 * first — and the plan's notes say so. A pipeline already past the budget as it ran keeps only
 * changes that do not raise its peak.
 */
import type { MemoryProjection, PlanChange } from '../shared/analysis';
import type { Overrides } from '../shared/profile';
import { formatBytes } from '../shared/words';
import { applyOverrides, type Config } from './config';
import { changeTitle } from './describe';
import type { Measured } from './measured';
import { projectMemory } from './memory';

/** A change lowered to fit, by the knob it sizes: the new size, the change with it. */
function resized(ch: PlanChange, n: number): PlanChange | undefined {
  if (ch.kind === 'parallelism') return { ...ch, to: n };
  if (ch.kind === 'prefetch') return { ...ch, size: n };
  if (ch.kind === 'placement' && ch.to === 'worker') return { ...ch, parallelism: n };
  return undefined;
}

/** The size a change sets, and the least it may be lowered to while still being a change. */
function sizeRange(ch: PlanChange): { from: number; to: number } | undefined {
  if (ch.kind === 'parallelism') return { from: typeof ch.from === 'number' ? ch.from + 1 : 2, to: ch.to };
  if (ch.kind === 'prefetch') return { from: 1, to: ch.size };
  if (ch.kind === 'placement' && ch.to === 'worker') return { from: 1, to: ch.parallelism };
  return undefined;
}

/**
 * `changes` kept within `budgetBytes` of projected peak, with a note for each change lowered or
 * left out. Unchanged when the profile did not measure what the projection needs.
 */
export function withinBudget(m: Measured, base: Config, changes: PlanChange[], budgetBytes: number, overridesOf: (changes: PlanChange[]) => Overrides, notes: string[]): PlanChange[] {
  const project = (subset: PlanChange[]): MemoryProjection | undefined => projectMemory(m, applyOverrides(m, base, overridesOf(subset)), base, budgetBytes, 'full');
  let kept = changes;
  const first = project(kept)?.peakBytes;
  if (first === undefined || first <= budgetBytes) return changes;
  let peak: number = first;
  const asRan = project([])?.peakBytes ?? 0;
  const title = (ch: PlanChange) => changeTitle(ch, m.profile);
  while (peak > budgetBytes && kept.length > 0) {
    // The change whose removal lowers the peak most.
    let worst: PlanChange | undefined;
    let without: number = peak;
    for (const ch of kept) {
      const p = project(kept.filter((c) => c !== ch))!.peakBytes;
      if (p < without) {
        without = p;
        worst = ch;
      }
    }
    if (worst === undefined) break;
    const rest = kept.filter((c) => c !== worst);
    const lowered = lowerToFit(worst, (ch) => project([...rest, ch])!.peakBytes, budgetBytes);
    if (lowered !== undefined) {
      kept = kept.map((c) => (c === worst ? lowered : c));
      notes.push(`${title(worst)} would bring the projected peak memory to ≈ ${formatBytes(peak)}, past the ${formatBytes(budgetBytes)} memory budget, so the plan lowers it: ${title(lowered)}.`);
      peak = project(kept)!.peakBytes;
      continue;
    }
    kept = rest;
    const why = asRan > budgetBytes ? `; the pipeline as written already projects ≈ ${formatBytes(asRan)}` : '';
    notes.push(`${title(worst)} would bring the projected peak memory to ≈ ${formatBytes(peak)}, past the ${formatBytes(budgetBytes)} memory budget${why}, so the plan leaves it out.`);
    peak = without;
  }
  return kept;
}

/** The largest size of `ch` whose projected peak fits, by bisection (the peak grows with the size), or undefined when none does. */
function lowerToFit(ch: PlanChange, peakWith: (ch: PlanChange) => number, budgetBytes: number): PlanChange | undefined {
  const range = sizeRange(ch);
  if (range === undefined || range.to - 1 < range.from) return undefined;
  let lo = range.from;
  let hi = range.to - 1;
  const fits = (n: number) => peakWith(resized(ch, n)!) <= budgetBytes;
  if (!fits(lo)) return undefined;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return resized(ch, lo);
}
