/**
 * A baseline: what one run of a pipeline measured, kept in a file so a later run (in CI, after a
 * change) can be compared with it by the statistics verification uses (./compare.ts). It keeps
 * the run's window slices and its curve (the raw measurements, not only their rate), the machine
 * it ran on and how busy that machine was, and the configuration as run.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Overrides, OpKnobs, Profile, WindowSlice } from '../../shared/profile';
import { rootUnit } from '../../shared/units';
import { runCurve, type Curve } from '../paired';
import { pooledRate, runSlices } from '../stats';

/** The `schema` field every baseline file carries, and the version of its layout. */
export const BASELINE_SCHEMA = 'plumber-baseline';
export const BASELINE_VERSION = 1;

/** The machine a run measured on, and how busy it was. */
export interface BaselineMachine {
  cores: number;
  cpuModel: string;
  nodeVersion: string;
  platform: string;
  arch: string;
  /** The 1-minute load average at the end of the window, when the runner could read it. */
  loadAverage?: number;
  /** Cores the pipeline itself kept busy during its window (its process CPU ÷ the window's seconds): part of the load average. */
  ownCores: number;
  /** Cores the pipeline could get during its window (runner's /proc/stat measure), when measured. */
  availableCores?: number;
}

/** One run's measurements: the slices a rate is pooled from and the curve runs are paired on. */
export interface BaselineRun {
  /** Pooled rate of `slices`, in `unit` per second (for people reading the file; the comparison recomputes it). */
  rate: number;
  halfWidth: number;
  unit: string;
  slices: WindowSlice[];
  /** Where the run stood along the data at each slice boundary (engine/paired.ts); absent when the window was not sliced. */
  curve?: Curve;
  endReason: Profile['run']['endReason'];
}

/** A baseline file: schema-versioned JSON. */
export interface Baseline {
  schema: typeof BASELINE_SCHEMA;
  version: typeof BASELINE_VERSION;
  createdAt: string;
  pipeline: { file: string; exportName?: string; sha256: string };
  config: { overrides: Overrides; knobs: Record<string, OpKnobs>; seconds: number; warmupSeconds: number };
  machine: BaselineMachine;
  run: BaselineRun;
}

/** A baseline file that cannot be used, with the sentence that says why. */
export class BaselineError extends Error {}

/** SHA-256 of a file's bytes, hex. */
export function fileHash(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** The machine of a profile's run, with its load. */
export function machineOf(profile: Profile): BaselineMachine {
  const { machine, run } = profile;
  const ownCores = run.seconds > 0 ? run.processCpuSeconds / run.seconds : 0;
  return {
    cores: machine.cores,
    cpuModel: machine.cpuModel.trim(),
    nodeVersion: machine.nodeVersion,
    platform: machine.platform,
    arch: machine.arch,
    ...(run.loadAverage !== undefined ? { loadAverage: run.loadAverage } : {}),
    ownCores: Number(ownCores.toFixed(3)),
    ...(run.availableCores !== undefined ? { availableCores: run.availableCores } : {}),
  };
}

/** What a run measured, as a baseline keeps it. */
export function runOf(profile: Profile): BaselineRun {
  const slices = runSlices(profile);
  const pooled = pooledRate(slices);
  const curve = runCurve(profile);
  return { rate: pooled.rate, halfWidth: pooled.halfWidth, unit: rootUnit(profile), slices, ...(curve ? { curve } : {}), endReason: profile.run.endReason };
}

/** A baseline from a profile of `file` (its path as the user gave it, its bytes' hash) run with the given budget. */
export function baselineOf(profile: Profile, o: { file: string; sha256: string; exportName?: string; seconds: number; warmupSeconds: number; now?: Date }): Baseline {
  const knobs: Record<string, OpKnobs> = {};
  for (const op of profile.ops) if (Object.keys(op.knobs).length > 0) knobs[op.id] = op.knobs;
  return {
    schema: BASELINE_SCHEMA,
    version: BASELINE_VERSION,
    createdAt: (o.now ?? new Date()).toISOString(),
    pipeline: { file: o.file, ...(o.exportName !== undefined ? { exportName: o.exportName } : {}), sha256: o.sha256 },
    config: { overrides: profile.run.overrides, knobs, seconds: o.seconds, warmupSeconds: o.warmupSeconds },
    machine: machineOf(profile),
    run: runOf(profile),
  };
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

function validSlices(x: unknown): x is WindowSlice[] {
  return Array.isArray(x) && x.every((s) => isObject(s) && isNumber(s['elements']) && s['elements'] >= 0 && isNumber(s['seconds']) && s['seconds'] > 0);
}

function validCurve(x: unknown): x is Curve {
  if (!isObject(x)) return false;
  const { n, t } = x;
  return Array.isArray(n) && Array.isArray(t) && n.length === t.length && n.length >= 2 && n.every(isNumber) && t.every(isNumber);
}

/**
 * Reads a baseline from parsed JSON, checking what the comparison relies on; throws a
 * BaselineError naming `where` and the field at fault. Fields a later version adds are ignored;
 * a later version's layout is refused with the version it needs.
 */
export function parseBaseline(json: unknown, where: string): Baseline {
  const fail = (what: string): never => {
    throw new BaselineError(`${where} is not a Plumber baseline: ${what}. Make one with \`plumber check FILE --save-baseline ${where}\`.`);
  };
  if (!isObject(json) || json['schema'] !== BASELINE_SCHEMA) return fail(`its "schema" field is not "${BASELINE_SCHEMA}"`);
  if (json['version'] !== BASELINE_VERSION) {
    throw new BaselineError(`${where} is a baseline of layout version ${String(json['version'])}; this Plumber reads version ${BASELINE_VERSION}. Save the baseline again with this version.`);
  }
  const { machine, run, pipeline, config } = json;
  if (!isObject(pipeline) || typeof pipeline['file'] !== 'string' || typeof pipeline['sha256'] !== 'string') return fail('"pipeline" needs "file" and "sha256"');
  if (!isObject(config) || !isObject(config['overrides']) || !isObject(config['knobs'])) return fail('"config" needs "overrides" and "knobs"');
  if (!isObject(machine) || !isNumber(machine['cores']) || typeof machine['cpuModel'] !== 'string' || !isNumber(machine['ownCores'])) return fail('"machine" needs "cores", "cpuModel" and "ownCores"');
  if (machine['loadAverage'] !== undefined && !isNumber(machine['loadAverage'])) return fail('"machine.loadAverage" must be a number');
  if (!isObject(run) || !validSlices(run['slices']) || typeof run['unit'] !== 'string') return fail('"run" needs "slices" (each with elements ≥ 0 and seconds > 0) and "unit"');
  if (run['slices'].length === 0) return fail('"run.slices" is empty');
  if (run['curve'] !== undefined && !validCurve(run['curve'])) return fail('"run.curve" needs "n" and "t" of the same length');
  return json as unknown as Baseline;
}
