/**
 * `--override OP=KNOB:VALUE`: how a person runs a plan (or any knob setting) without editing the
 * pipeline's source.
 */
import * as path from 'node:path';
import type { KnobOverride, Overrides, Profile } from '../shared/profile';
import { parseOpId } from '../shared/opId';
import { checkKnobOverride } from '../runner/overrides';
import { inKnobRange, knobRangeWords, type RangedKnob } from '../shared/knobs';
import { UsageError } from './args';

/** The knobs `--override` accepts, with what their values look like (for help and errors). */
export const OVERRIDE_KNOBS: Record<string, string> = {
  parallelism: `${knobRangeWords('parallelism')} (calls or worker threads in flight) or auto`,
  prefetch: `${knobRangeWords('prefetch')} (buffer size of the prefetch after the operator; 0 removes it)`,
  cache: '"memory", a file path, or false (insert or remove a cache after the operator)',
  placement: '"main" or "worker" (run the fn in worker threads; it must be an exported function)',
  deterministic: 'true or false (false lets the fastest result go first)',
  cycleLength: `${knobRangeWords('cycleLength')} (interleave: inputs open at once)`,
  module: 'with placement:worker, the file that exports the fn (default: the pipeline file)',
  exportName: "with placement:worker, the fn's export name when it differs from its name",
  fuse: "true or false (a worker map right after another: run it in that map's worker tasks)",
};

function parseValue(knob: string, raw: string, spec: string): KnobOverride {
  const bad = (): never => {
    throw new UsageError(`--override ${spec}: ${knob} must be ${OVERRIDE_KNOBS[knob]}, got "${raw}".`);
  };
  // Decimal digits only: Number() would also read 0x10, 1e3 and 16.0.
  const whole = (k: RangedKnob): number => {
    const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
    return inKnobRange(k, n) ? n : bad();
  };
  switch (knob) {
    case 'parallelism':
      return { parallelism: raw === 'auto' ? 'auto' : whole('parallelism') };
    case 'prefetch':
    case 'cycleLength':
      return { [knob]: whole(knob) };
    case 'deterministic':
    case 'fuse':
      if (raw !== 'true' && raw !== 'false') bad();
      return { [knob]: raw === 'true' };
    case 'placement':
      if (raw !== 'main' && raw !== 'worker') bad();
      return { placement: raw as 'main' | 'worker' };
    case 'module':
      if (raw === '') bad();
      // A path typed on the command line means a path from where the command runs; the worker
      // thread that imports it has no idea of that directory, so it gets an absolute one.
      return { module: raw.startsWith('file:') || path.isAbsolute(raw) ? raw : path.resolve(raw) };
    case 'exportName':
      if (raw === '') bad();
      return { [knob]: raw };
    case 'cache':
      if (raw === '') bad();
      return { cache: raw === 'false' ? false : raw };
    default:
      throw new UsageError(`--override ${spec}: unknown knob "${knob}". Knobs: ${Object.keys(OVERRIDE_KNOBS).join(', ')}.`);
  }
}

/**
 * Parses every `--override` value into runner overrides. Several overrides of one operator merge
 * (`--override 12:6=placement:worker --override 12:6=parallelism:2`).
 */
export function parseOverrides(specs: string[]): Overrides {
  const overrides: Overrides = {};
  for (const spec of specs) {
    const eq = spec.lastIndexOf('=');
    if (eq <= 0) throw new UsageError(`--override "${spec}" is not OP=KNOB:VALUE, e.g. --override 12:6=parallelism:4.`);
    const op = spec.slice(0, eq);
    const setting = spec.slice(eq + 1);
    if (!parseOpId(op)) {
      throw new UsageError(`--override ${spec}: "${op}" is not an operator id. Use line:column (e.g. 12:6) or path:line:column (e.g. lib/decode.ts:3:10), as \`plumber plan\` lists them.`);
    }
    const colon = setting.indexOf(':');
    if (colon <= 0) throw new UsageError(`--override ${spec}: expected KNOB:VALUE after "=", e.g. parallelism:4.`);
    const knob = setting.slice(0, colon);
    const value = parseValue(knob, setting.slice(colon + 1), spec);
    const merged = { ...overrides[op], ...value };
    const problem = checkKnobOverride(op, merged);
    if (problem) throw new UsageError(problem);
    overrides[op] = merged;
  }
  return overrides;
}

/**
 * The overrides as the `--override` flags that reproduce them (for "run this plan" hints). The
 * worker module is left out when it is the pipeline file (the runner's default), and the export
 * name when it is the fn's own name.
 */
export function overridesToFlags(overrides: Overrides, profile?: Profile): string[] {
  const flags: string[] = [];
  for (const [op, o] of Object.entries(overrides)) {
    const fnName = profile?.ops.find((x) => x.id === op)?.fnName;
    for (const [knob, value] of Object.entries(o)) {
      if (value === undefined) continue;
      if (knob === 'module' && profile && path.resolve(String(value).replace(/^file:\/\//, '')) === path.resolve(profile.pipeline.file)) continue;
      if (knob === 'exportName' && value === fnName) continue;
      const shown = knob === 'module' ? shortPath(String(value)) : String(value);
      flags.push(`--override ${op}=${knob}:${shown}`);
    }
  }
  return flags;
}

/** A module path as a person would type it here: relative to the working directory when inside it. */
function shortPath(value: string): string {
  if (value.startsWith('file:') || !path.isAbsolute(value)) return value;
  const rel = path.relative(process.cwd(), value);
  return rel.startsWith('..') || path.isAbsolute(rel) ? value : rel;
}
