/**
 * Plumber's settings: the one source of truth for their types, defaults and normalisation. The
 * `contributes.configuration` section of package.json must match (a unit test checks). Values
 * of the wrong type fall back to the default, and the normaliser reports which keys it replaced.
 */

import { KNOB_RANGES } from './knobs';

export interface Settings {
  /** Show code lenses on operators and pipeline heads; `heatBars` draws operator heat on the lines instead of operator lenses. */
  codeLens: { enabled: boolean; operators: boolean; pipelines: boolean; heatBars: boolean };
  /** Show inlay hints with per-operator rates (an alternative to lenses). */
  inlayHints: { enabled: boolean };
  /** Static lints and bottleneck diagnostics. */
  diagnostics: { enabled: boolean };
  /** The runner: how long and how much to profile. */
  profile: { seconds: number; maxElements: number; startSeconds: number; timeoutSeconds: number; memoryMB: number };
  /** Node executable and extra arguments for the runner (restricted: only honoured in trusted workspaces). */
  runner: { nodePath: string; nodeArgs: string[] };
  /** Model inputs. */
  model: { cores: number; memoryBudgetMB: number; maxInFlight: number; cacheDir: string };
  /** How a plan is made: profile passes before planning, and whether runs verify it before it is offered. */
  plan: { passes: number; verify: boolean; budgetSeconds: number };
  /** How fixes apply: `preview` opens VS Code's refactor preview for a fix that changes more than one place. */
  fixes: { preview: boolean };
}

export const DEFAULT_SETTINGS: Settings = {
  codeLens: { enabled: true, operators: true, pipelines: true, heatBars: false },
  inlayHints: { enabled: false },
  diagnostics: { enabled: true },
  profile: { seconds: 3, maxElements: 100_000, startSeconds: 10, timeoutSeconds: 60, memoryMB: 4096 },
  runner: { nodePath: '', nodeArgs: [] },
  model: { cores: 0, memoryBudgetMB: 0, maxInFlight: 0, cacheDir: '' },
  plan: { passes: 2, verify: true, budgetSeconds: 15 },
  fixes: { preview: true },
};

/** The JSON type a setting has in `contributes.configuration`. */
export type SettingType = 'boolean' | 'number' | 'integer' | 'string' | 'array';

/** Where a setting may be set (VS Code's `scope`). */
export type SettingScope = 'application' | 'machine' | 'window' | 'resource' | 'machine-overridable' | 'language-overridable';

/** One `plumber.*` setting as VS Code shows it: the row `contributes.configuration` must carry. */
export interface SettingSpec {
  /** The key under `plumber.`, dotted like `profile.seconds`. */
  key: string;
  type: SettingType;
  scope: SettingScope;
  markdownDescription: string;
  minimum?: number;
  maximum?: number;
  /** Only honoured in trusted workspaces (listed in `capabilities.untrustedWorkspaces.restrictedConfigurations`). */
  restricted?: boolean;
}

/**
 * Every setting of `Settings`, flattened, with what VS Code needs to show it. Defaults come from
 * DEFAULT_SETTINGS so they cannot drift; a unit test checks package.json against this list.
 */
export const SETTING_SPECS: readonly SettingSpec[] = [
  { key: 'codeLens.enabled', type: 'boolean', scope: 'resource', markdownDescription: 'Show Plumber code lenses (rates, the bottleneck, **Profile** and **Apply all Plumber fixes**) in pipeline files.' },
  { key: 'codeLens.operators', type: 'boolean', scope: 'resource', markdownDescription: 'Show a lens on each operator line with its measured rate and share of CPU.' },
  { key: 'codeLens.pipelines', type: 'boolean', scope: 'resource', markdownDescription: "Show a lens on each pipeline's first line with its rate, the model's bound and the actions." },
  {
    key: 'codeLens.heatBars',
    type: 'boolean',
    scope: 'resource',
    markdownDescription: "Show each operator's share of the pipeline's time as a heat bar on its line (a line background and an overview-ruler mark) instead of an operator lens, so the code does not move.",
  },
  { key: 'inlayHints.enabled', type: 'boolean', scope: 'resource', markdownDescription: 'Show per-operator rates as inlay hints at the end of operator lines (an alternative to the operator lenses).' },
  { key: 'diagnostics.enabled', type: 'boolean', scope: 'resource', markdownDescription: 'Report static lints and the measured bottleneck as Information/Warning diagnostics.' },
  {
    key: 'profile.seconds',
    type: 'number',
    scope: 'resource',
    minimum: 0.1,
    markdownDescription: 'How long the runner measures a pipeline, in seconds (after warm-up). Measurement stops earlier when the rate has converged.',
  },
  { key: 'profile.maxElements', type: 'integer', scope: 'resource', minimum: 1, markdownDescription: 'The most root elements the runner pulls from a pipeline in one profile.' },
  {
    key: 'profile.startSeconds',
    type: 'number',
    scope: 'resource',
    minimum: 0.1,
    markdownDescription:
      "The longest the runner waits for a pipeline's first element, in seconds (`plumber --start`). A large shuffle buffer or a slow source needs more; `plumber.profile.timeoutSeconds` still bounds the whole run.",
  },
  { key: 'profile.timeoutSeconds', type: 'number', scope: 'resource', minimum: 1, maximum: 2147483, markdownDescription: 'Stop a profile that runs longer than this many seconds and report it as timed out.' },
  { key: 'profile.memoryMB', type: 'integer', scope: 'resource', minimum: 64, markdownDescription: "The runner process's heap limit in MB (`--max-old-space-size`)." },
  {
    key: 'runner.nodePath',
    type: 'string',
    scope: 'machine-overridable',
    restricted: true,
    markdownDescription: "The Node.js executable that runs pipelines. Empty: the extension host's own Node. Only used in trusted workspaces.",
  },
  { key: 'runner.nodeArgs', type: 'array', scope: 'machine-overridable', restricted: true, markdownDescription: 'Extra Node.js arguments for the runner, e.g. `["--import", "tsx"]`. Only used in trusted workspaces.' },
  {
    key: 'model.cores',
    type: 'integer',
    scope: 'resource',
    minimum: 0,
    markdownDescription:
      "The target machine: cores the model plans for. `0`: the cores of the machine the profile ran on. Another count labels every plan \"predicted for N cores\", with verification here only when the plan's worker threads fit in this machine's cores; the what-if hover answers for the target's cores.",
  },
  {
    key: 'model.memoryBudgetMB',
    type: 'integer',
    scope: 'resource',
    minimum: 0,
    markdownDescription:
      "The most the pipeline's projected peak memory may reach with a plan, in MB (its buffers, calls in flight, worker threads and caches on top of the process). `0`: half of the smaller of the free memory at profile time and the runner's heap limit.",
  },
  {
    key: 'model.maxInFlight',
    type: 'integer',
    scope: 'resource',
    minimum: 0,
    maximum: KNOB_RANGES.parallelism.max,
    markdownDescription:
      'The most calls in flight a plan gives an awaiting operator, and the most inner datasets it has an interleave pull at once, as `plumber plan --max-in-flight`: keep a database or an API from more concurrent requests than it should take. `0`: 256.',
  },
  {
    key: 'model.cacheDir',
    type: 'string',
    scope: 'resource',
    markdownDescription:
      "Where a plan puts a disk cache (`cache(path)`) when the cache that pays does not fit the memory budget, relative to the pipeline file's directory, as `plumber plan --cache-dir`. Empty: `.cache/plumber`.",
  },
  {
    key: 'plan.passes',
    type: 'integer',
    scope: 'resource',
    minimum: 1,
    maximum: 5,
    markdownDescription: 'Profile runs before the plan: `1` plans from the pipeline as written; `2` re-profiles with the plan applied and plans again, which is how `plumber plan` works.',
  },
  {
    key: 'plan.verify',
    type: 'boolean',
    scope: 'resource',
    markdownDescription: "Measure the plan against the pipeline as written before offering it, keeping only changes that measured faster. Off: fixes show the model's estimate only, marked *not verified*.",
  },
  {
    key: 'plan.budgetSeconds',
    type: 'number',
    scope: 'resource',
    minimum: 0,
    markdownDescription:
      'Seconds a whole diagnosis (profile, plan, verification) aims for, as `plumber plan --budget`. Verification takes what the passes leave: it always measures the plan beside the pipeline as written, a second pair of runs may take up to 10 s when the load drifted during the first or its two runs measured different stretches of the data, and other runs start only when they fit.',
  },
  {
    key: 'fixes.preview',
    type: 'boolean',
    scope: 'resource',
    markdownDescription: "Open VS Code's refactor preview before applying a fix that changes more than one place (single-knob fixes apply at once). Off: every fix applies at once.",
  },
];

/** The LSP trace setting every language client reads (`<section>.trace.server`). */
export const TRACE_SETTING = {
  key: 'trace.server',
  type: 'string',
  scope: 'window',
  enum: ['off', 'messages', 'verbose'],
  default: 'off',
  markdownDescription: 'Log the messages between VS Code and the Plumber language server in the **Plumber** output channel.',
} as const;

/** Settings that must not come from an untrusted workspace: they decide which program runs. */
export const RESTRICTED_SETTINGS: readonly string[] = SETTING_SPECS.filter((s) => s.restricted).map((s) => `plumber.${s.key}`);

/** Reads a dotted key such as `profile.seconds` from a nested object. */
export function getPath(obj: unknown, key: string): unknown {
  let cur: unknown = obj;
  for (const part of key.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function setPath(obj: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let cur = obj;
  for (const part of parts.slice(0, -1)) cur = cur[part] as Record<string, unknown>;
  cur[parts[parts.length - 1]] = value;
}

/** The default of one flattened setting. */
export function defaultOf(key: string): unknown {
  return getPath(DEFAULT_SETTINGS, key);
}

function fits(spec: SettingSpec, value: unknown): boolean {
  switch (spec.type) {
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'array':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
    case 'number':
    case 'integer':
      return (
        typeof value === 'number' &&
        Number.isFinite(value) &&
        (spec.type === 'number' || Number.isInteger(value)) &&
        (spec.minimum === undefined || value >= spec.minimum) &&
        (spec.maximum === undefined || value <= spec.maximum)
      );
  }
}

/** What `normalizeSettings` made of raw configuration. */
export interface NormalizedSettings {
  settings: Settings;
  /** Full keys (`plumber.profile.seconds`) whose value had the wrong type or range and fell back to the default. */
  invalid: string[];
}

/**
 * Turns raw configuration (the object under `plumber`, e.g. `workspace.getConfiguration('plumber')`
 * or a `didChangeConfiguration` payload) into complete Settings. A missing key takes its default;
 * a key of the wrong type or out of range takes its default too and is listed in `invalid`, so the
 * caller can warn once instead of failing somewhere later.
 */
export function normalizeSettings(raw: unknown): NormalizedSettings {
  const settings = structuredClone(DEFAULT_SETTINGS) as unknown as Record<string, unknown>;
  const invalid: string[] = [];
  for (const spec of SETTING_SPECS) {
    const value = getPath(raw, spec.key);
    if (value === undefined || value === null) continue;
    if (fits(spec, value)) setPath(settings, spec.key, Array.isArray(value) ? [...value] : value);
    else invalid.push(`plumber.${spec.key}`);
  }
  return { settings: settings as unknown as Settings, invalid };
}
