/**
 * Command-line parsing, small on purpose: three commands with a handful of flags do not need a
 * framework, and a hand-written parser gives the exact error sentences the CLI promises.
 */

import { MAX_TIMER_SECONDS } from '../runner/timers';

/** A mistake in how the command was called (exit code 2). */
export class UsageError extends Error {}

export interface FlagSpec {
  /** Takes a value (`--seconds 2`, `--seconds=2`) or is a switch (`--json`). */
  value: boolean;
  /** May be given more than once (values collect in order). */
  repeat?: boolean;
}

export interface Parsed {
  positionals: string[];
  flags: Map<string, string[]>;
}

/** Parses `argv` against the flags a command accepts. Unknown flags are usage errors. */
export function parseArgs(argv: string[], specs: Record<string, FlagSpec>, command: string): Parsed {
  const positionals: string[] = [];
  const flags = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = (eq >= 0 ? arg.slice(0, eq) : arg).replace(/^--?/, '');
    const key = name === 'h' ? 'help' : name;
    // Own properties only: `--constructor` must not find Object.prototype's.
    const spec = Object.hasOwn(specs, key) ? specs[key] : undefined;
    if (!spec) throw new UsageError(`Unknown option ${arg.slice(0, eq >= 0 ? eq : undefined)} for \`plumber ${command}\`. Run \`plumber ${command} --help\` for its options.`);
    let value = 'true';
    if (spec.value) {
      if (eq >= 0) value = arg.slice(eq + 1);
      else if (i + 1 < argv.length) value = argv[++i];
      else throw new UsageError(`Option --${key} needs a value.`);
    } else if (eq >= 0) {
      throw new UsageError(`Option --${key} takes no value.`);
    }
    const list = flags.get(key) ?? [];
    if (list.length > 0 && !spec.repeat) throw new UsageError(`Option --${key} was given twice.`);
    list.push(value);
    flags.set(key, list);
  }
  return { positionals, flags };
}

/**
 * A number as the command line takes it: decimal digits with an optional sign and fraction (`2`,
 * `0.5`, `.5`). Hexadecimal, binary, octal and exponents (`0x10`, `1e3`), which Number() reads,
 * are refused: a person who typed them more likely made a mistake than meant 16 or 1000.
 */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/** A flag's value as a number within limits, or undefined when absent. */
export function numberFlag(p: Parsed, name: string, o: { min: number; max?: number; integer?: boolean; exclusiveMin?: boolean }): number | undefined {
  const raw = p.flags.get(name)?.[0];
  if (raw === undefined) return undefined;
  // A whole number past 2^53 is no longer the number typed.
  const max = o.max ?? (o.integer ? Number.MAX_SAFE_INTEGER : undefined);
  const n = DECIMAL.test(raw) ? Number(raw) : NaN;
  const ok = Number.isFinite(n) && (o.exclusiveMin ? n > o.min : n >= o.min) && (max === undefined || n <= max) && (!o.integer || Number.isInteger(n));
  if (!ok) {
    const what = o.integer ? 'a whole number' : 'a number';
    const range = max === undefined ? `${o.exclusiveMin ? 'above' : 'of at least'} ${o.min}` : `${o.exclusiveMin ? 'above' : 'from'} ${o.min} ${o.exclusiveMin ? 'and at most' : 'to'} ${max}`;
    const form = Number.isNaN(n) && raw.trim() !== '' && Number.isFinite(Number(raw)) ? ` (write it in decimal digits, like ${o.integer ? '4' : '2 or 0.5'}: not in hexadecimal, binary, octal or with an exponent)` : '';
    throw new UsageError(`--${name} must be ${what} ${range}, got "${raw}"${form}.`);
  }
  return n;
}

/** Megabytes per unit of a size flag (binary units, as Node's heap limits count megabytes). */
const SIZE_UNITS: Record<string, number> = { '': 1, k: 1 / 1024, kb: 1 / 1024, kib: 1 / 1024, m: 1, mb: 1, mib: 1, g: 1024, gb: 1024, gib: 1024 };

/**
 * A size flag in megabytes: a plain number (`512`) or one with a unit (`512MB`, `1.5G`, `2GiB`,
 * `800k`), whole megabytes when `integer` (rounded up). Undefined when absent; a usage error
 * naming the forms it takes otherwise.
 */
export function megabytesFlag(p: Parsed, name: string, o: { min: number; integer?: boolean }): number | undefined {
  const raw = p.flags.get(name)?.[0];
  if (raw === undefined) return undefined;
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-z]*)\s*$/i.exec(raw);
  const unitName = m ? m[2]!.toLowerCase() : '';
  const unit = m && Object.hasOwn(SIZE_UNITS, unitName) ? SIZE_UNITS[unitName] : undefined;
  const mb = m && unit !== undefined ? Number(m[1]) * unit : NaN;
  const n = o.integer ? Math.ceil(mb) : mb;
  if (!(Number.isFinite(n) && n >= o.min)) {
    throw new UsageError(`--${name} must be a size of at least ${o.min} MB: megabytes (512), or with a unit (512MB, 1.5GB, 800KB); got "${raw}".`);
  }
  return n;
}

/**
 * Limits of the time flags, in seconds. Node's timers cannot wait longer than MAX_TIMER_SECONDS
 * (about 24.8 days); the warm-up, the budget and the time before the first element add up to the
 * default time limit, so each of the first two gets a third of it.
 */
export const MAX_BUDGET_SECONDS = Math.floor(MAX_TIMER_SECONDS / 3);

/** The time flags every running command shares: `--seconds`, `--warmup`, `--start`, `--timeout`. */
export function timeFlags(p: Parsed): { seconds: number | undefined; warmupSeconds: number | undefined; startSeconds: number | undefined; timeoutSeconds: number | undefined } {
  return {
    seconds: numberFlag(p, 'seconds', { min: 0, max: MAX_BUDGET_SECONDS, exclusiveMin: true }),
    warmupSeconds: numberFlag(p, 'warmup', { min: 0, max: MAX_BUDGET_SECONDS }),
    startSeconds: numberFlag(p, 'start', { min: 0, max: MAX_BUDGET_SECONDS, exclusiveMin: true }),
    timeoutSeconds: numberFlag(p, 'timeout', { min: 0, max: MAX_TIMER_SECONDS, exclusiveMin: true }),
  };
}
