import type { CallSite, OpKind } from './tracing';

/** The operator an error came from. */
export interface OpRef {
  kind: OpKind;
  /** `OpInfo.key`: `${kind}@file:line:column` when traced, else `${kind}#n`. */
  key: string;
  /** Where the operator was written, when the call site was captured (a tracer or overrides were installed). */
  site?: CallSite;
}

/**
 * An exception raised inside a pipeline, as the consumer sees it: which operator failed, on which
 * element of that operator's input, and the original error as `cause`.
 */
export class PipelineError extends Error {
  readonly op: OpRef;
  /** The element's index in the failing operator's input; undefined when the failure was not tied to one element. */
  readonly index: number | undefined;
  declare readonly cause: unknown;

  constructor(op: OpRef, index: number | undefined, cause: unknown, what?: string) {
    const where = op.site ? ` at ${op.site.file}:${op.site.line}:${op.site.column}` : '';
    const which = index === undefined ? '' : ` on element ${index}`;
    const reason = what ?? (cause instanceof Error ? cause.message : String(cause));
    super(`${op.kind}${where} failed${which}: ${reason}`, { cause });
    this.name = 'PipelineError';
    this.op = op;
    this.index = index;
  }
}

/** Wraps `e` as coming from `op` unless it already is a PipelineError from further upstream. */
export function asPipelineError(op: OpRef, index: number | undefined, e: unknown): PipelineError {
  return e instanceof PipelineError ? e : new PipelineError(op, index, e);
}
