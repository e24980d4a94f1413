/**
 * Plumber's settings: the one source of truth for their types, defaults and normalisation. The
 * `contributes.configuration` section of package.json must match (a unit test checks). Values
 * of the wrong type fall back to the default, and the normaliser reports which keys it replaced.
 */

export interface Settings {
  /** Show code lenses on operators and pipeline heads. */
  codeLens: { enabled: boolean; operators: boolean; pipelines: boolean };
  /** Show inlay hints with per-operator rates (an alternative to lenses). */
  inlayHints: { enabled: boolean };
  /** Static lints and bottleneck diagnostics. */
  diagnostics: { enabled: boolean };
  /** The runner: how long and how much to profile. */
  profile: { seconds: number; maxElements: number; timeoutSeconds: number; memoryMB: number };
  /** Node executable and extra arguments for the runner (restricted: only honoured in trusted workspaces). */
  runner: { nodePath: string; nodeArgs: string[] };
  /** Model inputs. */
  model: { cores: number; memoryBudgetMB: number };
}

export const DEFAULT_SETTINGS: Settings = {
  codeLens: { enabled: true, operators: true, pipelines: true },
  inlayHints: { enabled: false },
  diagnostics: { enabled: true },
  profile: { seconds: 5, maxElements: 100_000, timeoutSeconds: 60, memoryMB: 4096 },
  runner: { nodePath: '', nodeArgs: [] },
  model: { cores: 0, memoryBudgetMB: 0 },
};
