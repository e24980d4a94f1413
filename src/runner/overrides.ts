/**
 * Overrides arrive keyed by operator id (what profiles and plans show); the library reads them
 * keyed by call site. This module checks them and translates one key into the other.
 */
import * as path from 'node:path';
import { parseOpId, siteOfOpId } from '../shared/opId';
import type { KnobOverride, Overrides } from '../shared/profile';
import { inKnobRange, knobRangeWords } from '../shared/knobs';

/** The knobs an override may set, in the order help texts list them. */
export const KNOBS = ['parallelism', 'prefetch', 'cache', 'placement', 'deterministic', 'cycleLength', 'module', 'exportName', 'fuse'] as const;
export type Knob = (typeof KNOBS)[number];

/** The `siteKey` the library looks an override up by. */
export function siteKeyOfOpId(id: string, pipelineFile: string): string | undefined {
  const site = siteOfOpId(id, pipelineFile);
  return site ? `${site.file}:${site.line}:${site.column}` : undefined;
}

/**
 * Checks one override's values. Returns a sentence describing the first problem, or undefined
 * when the override is valid.
 */
export function checkKnobOverride(id: string, o: KnobOverride): string | undefined {
  const known = new Set<string>(KNOBS);
  for (const k of Object.keys(o)) {
    if (!known.has(k)) return `Override for ${id}: unknown knob "${k}". Knobs: ${KNOBS.slice(0, 6).join(', ')}.`;
  }
  if (o.parallelism !== undefined && o.parallelism !== 'auto' && !inKnobRange('parallelism', o.parallelism)) {
    return `Override for ${id}: parallelism must be ${knobRangeWords('parallelism')} or auto, got ${String(o.parallelism)}.`;
  }
  if (o.cycleLength !== undefined && !inKnobRange('cycleLength', o.cycleLength)) return `Override for ${id}: cycleLength must be ${knobRangeWords('cycleLength')}, got ${String(o.cycleLength)}.`;
  if (o.prefetch !== undefined && !inKnobRange('prefetch', o.prefetch)) return `Override for ${id}: prefetch must be ${knobRangeWords('prefetch')} (0 removes a prefetch), got ${String(o.prefetch)}.`;
  if (o.placement !== undefined && o.placement !== 'main' && o.placement !== 'worker') return `Override for ${id}: placement must be "main" or "worker", got ${String(o.placement)}.`;
  if (o.deterministic !== undefined && typeof o.deterministic !== 'boolean') return `Override for ${id}: deterministic must be true or false, got ${String(o.deterministic)}.`;
  if (o.fuse !== undefined && typeof o.fuse !== 'boolean') return `Override for ${id}: fuse must be true or false, got ${String(o.fuse)}.`;
  if (o.cache !== undefined && o.cache !== false && (typeof o.cache !== 'string' || o.cache === '')) {
    return `Override for ${id}: cache must be "memory", a file path, or false, got ${String(o.cache)}.`;
  }
  if (o.module !== undefined && (typeof o.module !== 'string' || o.module === '')) return `Override for ${id}: module must be a file path or file: URL.`;
  if (o.exportName !== undefined && (typeof o.exportName !== 'string' || o.exportName === '')) return `Override for ${id}: exportName must be a name.`;
  return undefined;
}

/** Checks every override: ids must be `line:column` or `path:line:column`, values in range. */
export function checkOverrides(overrides: Overrides): string | undefined {
  for (const [id, o] of Object.entries(overrides)) {
    if (!parseOpId(id)) {
      return `"${id}" is not an operator id. Use the operator's line:column (e.g. 12:6), or path:line:column for an operator in another file (e.g. lib/decode.ts:3:10), as \`plumber plan\` lists them.`;
    }
    if (typeof o !== 'object' || o === null) return `Override for ${id} must be an object of knob values.`;
    const problem = checkKnobOverride(id, o);
    if (problem) return problem;
  }
  return undefined;
}

/** The overrides as the library reads them: a Map keyed by call site. */
export function toSiteMap(overrides: Overrides, pipelineFile: string): Map<string, KnobOverride> {
  const map = new Map<string, KnobOverride>();
  for (const [id, o] of Object.entries(overrides)) {
    const key = siteKeyOfOpId(id, pipelineFile);
    if (!key) continue;
    // A map moved to worker threads needs the module its fn is exported from; the pipeline's own
    // file is where a newcomer's fn lives, and the library reports clearly if it is not there.
    const value: KnobOverride = o.placement === 'worker' && !o.module ? { ...o, module: path.resolve(pipelineFile) } : { ...o };
    map.set(key, value);
  }
  return map;
}
