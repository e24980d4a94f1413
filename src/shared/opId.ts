/**
 * The operator id: the one key that joins the source (the engine's graph), a profile (the runner's
 * tracer), a plan and an override. Defined once here so the two halves cannot drift apart.
 *
 * `line:column` (1-based, of the operator's method name) when the operator is in the pipeline's own
 * file; `relPath:line:column` when it is in another file (POSIX path relative to the pipeline
 * file's directory, e.g. `lib/decode.ts:4:10`). Paths are compared after `path.resolve`, so
 * `./a.ts` and `/abs/a.ts` name the same file.
 */
import * as path from 'node:path';

const OP_ID = /^(?:(.+):)?(\d+):(\d+)$/;

/** A position in a file: absolute (or resolvable) path, 1-based line and column. */
export interface SitePosition {
  file: string;
  line: number;
  column: number;
}

/**
 * The op ids of the arguments of one `pipeline(…)` / `compose(…)` call (Node streams), which the
 * runner cannot read from a stack: the engine reads them from the source and hands them to the
 * runner. `site` is the call's callee name (`pipeline` in `stream.pipeline(`); `args[i]` is the id
 * of argument i, or null when that argument is not a stage of its own.
 */
export interface ArgSites {
  site: SitePosition;
  args: Array<string | null>;
}

/** The op id of an operator written at `site`, for a pipeline whose module is `pipelineFile`. */
export function opIdOfSite(site: SitePosition, pipelineFile: string): string {
  if (path.resolve(site.file) === path.resolve(pipelineFile)) return `${site.line}:${site.column}`;
  const rel = path
    .relative(path.dirname(path.resolve(pipelineFile)), path.resolve(site.file))
    .split(path.sep)
    .join('/');
  return `${rel}:${site.line}:${site.column}`;
}

/** Splits an op id (`12:6` or `lib/x.ts:3:10`) into its file part (if any), line and column; undefined when it is not one. */
export function parseOpId(id: string): { rel?: string; line: number; column: number } | undefined {
  const m = OP_ID.exec(id);
  if (!m) return undefined;
  const line = Number(m[2]);
  const column = Number(m[3]);
  if (line < 1 || column < 1) return undefined;
  return { rel: m[1], line, column };
}

/** The absolute file and position an op id names, for a pipeline whose module is `pipelineFile`. */
export function siteOfOpId(id: string, pipelineFile: string): SitePosition | undefined {
  const p = parseOpId(id);
  if (!p) return undefined;
  const file = p.rel === undefined ? path.resolve(pipelineFile) : path.resolve(path.dirname(path.resolve(pipelineFile)), p.rel);
  return { file, line: p.line, column: p.column };
}
