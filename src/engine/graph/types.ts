/**
 * The operator graph the server extracts from source: every pipeline built with plumber-data, each
 * operator with the exact ranges a lens, a diagnostic or a fix needs. Plain data (no ts-morph
 * nodes) so features, lints and the fix engine can be tested on hand-made values and the graph can
 * be written to JSON fixtures.
 */
import type { Dialect, Lever, OpKind } from '../../shared/profile';
import type { ArgSites } from '../../shared/opId';
import type { Range } from '../../shared/protocol';

export type { ArgSites, Dialect, Lever, OpKind, Range };

/** A source span: LSP range plus the offsets the fix engine edits with. */
export interface Span {
  range: Range;
  start: number;
  end: number;
}

/** A knob as written at the call site. */
export type Knob =
  /** A literal the fix engine may replace: number, string, boolean (`value`), with the literal's span. */
  | { state: 'literal'; value: number | string | boolean; text: string; span: Span }
  /** Not written: the library's default applies. */
  | { state: 'absent' }
  /** Any other expression (a variable, a call, arithmetic): a fix must not overwrite it. */
  | { state: 'expression'; text: string; span: Span };

/** Where new option properties can go. */
export type OptionsSite =
  /** An object literal (`{ parallelism: 2 }`): properties are added before `closeBrace`. */
  | {
      state: 'object';
      span: Span;
      /** Offset of the closing `}`. */
      closeBrace: number;
      /** End offset of the last property, when there is one. */
      lastPropertyEnd?: number;
      /** A comma follows the last property. */
      trailingComma: boolean;
      /** The object spans lines; new properties go on their own lines with `indent`. */
      multiline: boolean;
      indent: string;
    }
  /** No options argument: `, { … }` is inserted at `insertAt` (just after the previous argument). */
  | { state: 'absent'; insertAt: number; needsComma: boolean }
  /** A non-literal options expression (`opts`, `{ ...base }`): no property can be added safely. */
  | { state: 'expression'; text: string; span: Span };

/** The user function an operator calls. */
export interface FnInfo {
  /** The function's name at the call site (`decode`), or undefined for an anonymous inline function. */
  name?: string;
  /** The name it was declared with (its runtime `fn.name`), when the declaration was found. */
  declaredName?: string;
  /** How it is referenced: an identifier naming a declared function, an inline function, or something else. */
  form: 'reference' | 'inline' | 'other';
  /** Declared `async` (undefined when unknown). */
  async?: boolean;
  /** Absolute path of the module that defines it, when found. */
  file?: string;
  /** Where it is defined, when found. */
  definedAt?: Span;
  /** The name it is exported under from `file`, when it is a named export (so a worker can import it). */
  exportName?: string;
  /** True when `file` is the operator's own file. */
  sameFile?: boolean;
  /** The specifier the operator's file imports it with (`./transforms`), when imported. */
  importSpecifier?: string;
  /** Where `export ` can be inserted to make an unexported top-level function importable by a worker. */
  exportInsertAt?: number;
  /** The fields of its element it reads and writes, when its source was found. */
  fields?: FieldFacts;
}

/**
 * What a fn does with the fields of its element, from its source (graph/fields.ts). A list that is
 * absent is unknown: the fn may read or change any field.
 */
export interface FieldFacts {
  /** Fields of the element it reads (`x.label`, `({ label }) =>`). */
  reads?: string[];
  /** Fields its result differs from its element in (`{ ...x, image }`, `x.image = …; return x`). */
  writes?: string[];
  /** It takes the element context (`ctx.index`, `ctx.rng`), which a reorder changes. */
  usesContext: boolean;
}

/** Why an operator is random. */
export interface RandomInfo {
  reason: 'shuffle' | 'sample' | 'random-option' | 'ctx-rng' | 'math-random' | 'crypto';
  /** One sentence for a diagnostic. */
  detail: string;
  span: Span;
}

/** One operator of a pipeline. */
export interface GraphOp {
  /** The id the runner gives it: `line:column` (1-based, of the method name) or `relPath:line:column` in another file. */
  id: string;
  kind: OpKind;
  /** Absolute path of the file the operator is written in. */
  file: string;
  /** The method or function name (`map` in `.map(`, `from` in `from(`). */
  name: Span;
  /** The whole call expression, receiver included. */
  call: Span;
  /** From the method name to the closing parenthesis: what the operator itself adds. */
  own: Span;
  /** The line's indentation where the operator's `.name` starts, when it starts the line (a multi-line chain). */
  lineIndent?: string;
  /** A short label such as `map(decode)` or `batch(32)`. */
  label: string;
  fn?: FnInfo;
  /**
   * Knobs by name (`parallelism`, `placement`, `module`, `deterministic`, `random`, `bufferSize`,
   * `batchSize`, `count`, `cycleLength`, `blockLength`, `seed`, `path`, `numShards`, `shardIndex`,
   * `shift`, `stride`, `dropRemainder`, `bucketBoundaries`, `bucketBatchSizes`, `windowSize`,
   * `weights`, …). An array literal such as `weights` is an `expression` knob: read, never edited.
   */
  knobs: Record<string, Knob>;
  /** The options argument, for operators that take one. */
  options?: OptionsSite;
  /**
   * The option names the operator accepts. plumber-data rejects any other (a PipelineError naming
   * it), so a fix never writes one that is not here.
   */
  optionKeys?: string[];
  random?: RandomInfo;
  /**
   * Elements one pass of this source produces, when its literals say so (`range(100)`, `from([1, 2,
   * 3])`); absent otherwise.
   */
  cardinality?: number;
  /**
   * Ids of the operators it pulls from, in order: the receiver first, then zip/concatenate
   * arguments; for sampleFromDatasets the datasets of its array, for chooseFromDatasets those and
   * then its choice dataset.
   */
  inputs: string[];
  /** Position in the chain from the source (0 = source). */
  index: number;
  /**
   * For an operator built inside another operator's fn (the chain an `interleave` or `flatMap`
   * opens per element, a generator stage inside another): that operator's id, as the runner's
   * `OpProfile.parentId`. Such operators come before their parent in `ops`, like inputs.
   */
  parent?: string;
  /** The library the operator belongs to; absent: plumber-data. */
  dialect?: Dialect;
  /** The changes its own library can make (see `Lever`); absent: all of plumber-data's. */
  levers?: Lever[];
  /**
   * How a knob is spelt in this operator's options object when it is not plumber-data's name
   * (a Node stream's `{ parallelism: 'concurrency', prefetch: 'highWaterMark' }`): the fix engine
   * writes these names, and `knobs` holds what is written under them, keyed by plumber-data's name.
   */
  optionNames?: Partial<Record<string, string>>;
}

/** One pipeline: an exported (or at least named) chain of operators. */
export interface PipelineGraph {
  /** Export name (`default` for a default export), or `local:<name>@<line>` for an unexported chain. */
  name: string;
  exported: boolean;
  /** Exported as a zero-argument function returning the dataset (`export function train() { … }`). */
  factory: boolean;
  /** Absolute path of the file that defines the pipeline. */
  file: string;
  /** The pipeline's head: the declaration name or `export default`, for the lens. */
  head: Span;
  /** Operators from the sources to the root, in chain order (the inputs of zip/concatenate/sampleFromDatasets/chooseFromDatasets before their consumer): a DAG. */
  ops: GraphOp[];
  /** Id of the operator whose output is the pipeline's output. */
  rootId: string;
  /** True when the chain contains an upstream the server could not follow (a parameter, an untyped call). */
  partial: boolean;
  /** The library the chain is written with; absent: plumber-data. */
  dialect?: Dialect;
  /** Node streams: the op ids of the arguments of each `pipeline(…)`/`compose(…)` call in the chain, for the runner. */
  argSites?: ArgSites[];
}

/**
 * Where the server saw something that looks like a pipeline but could not follow it (built
 * dynamically, a library it does not know, a stage it cannot time): said to the user, never silent.
 */
export interface GraphStop {
  range: Range;
  /** One sentence: what was seen and why Plumber stops there. */
  message: string;
}

/** Everything the server knows about one file. */
export interface FileGraph {
  file: string;
  /** Whether `import.meta` (ESM) or `__filename` (CommonJS) names this module at run time. */
  moduleKind: 'esm' | 'cjs';
  pipelines: PipelineGraph[];
  /** True when plumber-data types were found (aliases and re-exports resolved by the checker). */
  typed: boolean;
  /** Chains seen but not followed, with why. */
  stops?: GraphStop[];
}
