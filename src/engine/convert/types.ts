/**
 * The rewrite's own vocabulary: what a dialect's reading of a chain hands the renderer. A dialect
 * (./tfjs.ts, ./streams.ts) says, operator by operator, which plumber-data call expresses it
 * faithfully, where the faithful part of the chain ends and why, and how the converted chain is
 * handed back to consumers (a tfjs `Dataset`, a `Readable`); ./render.ts writes it out with the
 * plan's knobs.
 */
import type { PlanChange } from '../../shared/analysis';
import type { PlannedEdit } from '../fixes/edits';
import type { FnInfo, GraphOp, PipelineGraph } from '../graph/types';

export type ConvertChange = Extract<PlanChange, { kind: 'convert' }>;

/** One plumber-data call of the converted chain. */
export interface Stage {
  /** The dialect operator it replaces (its id keys the plan's `then` changes). */
  op: GraphOp;
  /** The plumber-data method (`map`, `filter`, `shuffle`, …). */
  method: string;
  /** Positional arguments as written in the source. */
  args: string[];
  /** Options the dialect's own call carried, already in plumber-data's names (`parallelism` for Node's `concurrency`). */
  options: Array<[key: string, valueText: string]>;
  /** The fn the plumber-data call is given, when it is not the operator's own (a generator stage's `f` in `yield f(x)`). */
  fn?: FnInfo;
}

/** A dialect's reading of a chain. */
export interface DialectReading {
  /** The plumber-data source expression (`from(xs)`). */
  source: string;
  /**
   * A source that takes knobs of its own (a reader's `parallelism` and `placement`): its text with
   * the plan's options added. Without it the source takes none, and a plan change on it is refused.
   */
  sourceWith?(options: Array<[key: string, valueText: string]>): string;
  /** The source operator. */
  sourceOp: GraphOp;
  stages: Stage[];
  /**
   * Wraps the converted chain's text into what consumers received (`toTfDataset(…, tf)`,
   * `Readable.from(…)`). `selfImported`: worker threads import the pipeline's own module, so the
   * module must not start the chain when it is imported (see `lazily`).
   */
  wrap(chain: string, selfImported: boolean): string;
  /** Names the file must import from plumber-data. */
  imports: string[];
  /** Where the faithful part ends, when before the root: the operators after it stay as written, and why. */
  stoppedAt?: { op: GraphOp; why: string };
  /** What differs in ways consumers do not see (a tfjs map's `tf.tidy`), one sentence each. */
  notes: string[];
  /** The text the converted chain replaces, when it is not the operators' calls (a `pipeline(…)` call around them). */
  span?: { start: number; end: number };
  /** Edits elsewhere in the file the converted chain needs (an import, a fn it calls, a return type). */
  extraEdits?: PlannedEdit[];
}

export type Reading = { ok: true; reading: DialectReading } | { ok: false; reason: string };

/** What the rewrite needs: the chain, the change, and the file's text. */
export interface ConvertInput {
  pipeline: PipelineGraph;
  change: ConvertChange;
  /** The text of the pipeline's file, as the graph was extracted from. */
  text: string;
  moduleKind: 'esm' | 'cjs';
  /** Where the run found an operator's fn exported (the profile's `fnModule`), when the source does not show it. */
  runtimeModuleOf?(id: string): { file: string; exportName: string } | undefined;
}

export type ConvertOutcome =
  | {
      ok: true;
      /** Edits to the pipeline's file (and `export ` insertions where a worker needs a fn exported). */
      edits: PlannedEdit[];
      /** The pipeline file's text after the edits. */
      text: string;
      /** The operators converted, in chain order. */
      converted: string[];
      /** What stayed as written or differs unseen, one sentence each. */
      notes: string[];
    }
  | { ok: false; reason: string };

/**
 * `chain` as an async generator that builds and iterates it on the first `next()`: what a module
 * worker threads import must hand out, since `Readable.from` starts iterating at once and each
 * worker importing the module would otherwise start the whole pipeline (and its own workers).
 */
export function lazily(chain: string): string {
  return `(async function* () { yield* ${chain}; })()`;
}

/**
 * The stages of `ops` read in order until the first the rewrite refuses (`read` returns why): the
 * conversion stops there, and the rest of the chain stays as written.
 */
export function stagesUntilRefused(ops: readonly GraphOp[], read: (op: GraphOp, previous: GraphOp | undefined) => Stage | string): { stages: Stage[]; stoppedAt?: { op: GraphOp; why: string } } {
  const stages: Stage[] = [];
  let previous: GraphOp | undefined;
  for (const op of ops) {
    const s = read(op, previous);
    if (typeof s === 'string') return { stages, stoppedAt: { op, why: s } };
    stages.push(s);
    previous = op;
  }
  return { stages };
}
