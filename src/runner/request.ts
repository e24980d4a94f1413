/**
 * What the parent (`spawn.ts`) asks the runner child (`main.ts`) to do. Internal to the runner:
 * it travels as JSON in the child's argv, so it holds only plain data.
 */
import type { ArgSites } from '../shared/opId';
import type { Overrides } from '../shared/profile';

export interface RunRequest {
  /** `sample`: pull the first `maxElements` elements and send their digests (sample.ts), for the equivalence check. */
  mode: 'profile' | 'list' | 'sample';
  /** With `mode: 'sample'`: digest the rows each root element groups (a batch's), not the element. */
  sampleRows?: boolean;
  /** Absolute path of the pipeline module. */
  file: string;
  exportName?: string;
  /** Measurement budget after warm-up, wall seconds. */
  seconds: number;
  /** Measurement budget after warm-up, root elements. */
  maxElements: number;
  warmupSeconds: number;
  /** Warm-up ends after this many elements even if `warmupSeconds` has not passed. */
  warmupMaxElements: number;
  /**
   * Warm-up lasts at least this many root elements, for at most one window's budget beyond
   * `warmupSeconds` (see `RunProfileOptions.warmupMinElements`); absent or 0: no minimum.
   */
  warmupMinElements?: number;
  /** Seconds allowed before the first element arrives. */
  startSeconds: number;
  overrides: Overrides;
  /** Seconds between progress messages. */
  progressInterval: number;
  /** Calibrate worker tasks before the run and price moves after it (see `RunProfileOptions.probes`); absent means yes. */
  probes?: boolean;
  /**
   * Where the runner appends the pid of each process the pipeline starts in a group of its own
   * (`detached: true`), one a line, so the parent can end them even after killing the runner.
   */
  childPidFile?: string;
  /** Treat the module as a training script whatever it exports: watch the loop it runs (train.ts). */
  train?: boolean;
  /** Where the arguments of the pipeline's `pipeline(…)`/`compose(…)` calls are written (see `RunProfileOptions.argSites`). */
  argSites?: ArgSites[];
  /** The library's global seed (`setSeed`), set before the module loads, so random operators draw the same in every run. */
  seed?: number;
}

/**
 * Written by the runner to stderr when the pipeline calls process.exit, with the call's place:
 * the parent takes the line out of the user's output and says where the pipeline exited.
 */
export const EXIT_MARKER = '\u0000plumber-runner:exit:';

/** Defaults shared by the parent and the child. */
export const DEFAULTS = {
  seconds: 3,
  maxElements: Number.MAX_SAFE_INTEGER,
  warmupSeconds: 0.5,
  warmupMaxElements: 100_000,
  startSeconds: 10,
  progressInterval: 0.2,
} as const;
