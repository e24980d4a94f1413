/**
 * Turning what went wrong into a `ProfileError` a person can act on.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type { CallSite, ProfileError } from '../shared/profile';

/** Thrown inside the runner for failures that already have their `ProfileError`. */
export class RunnerFailure extends Error {
  constructor(readonly error: ProfileError) {
    super(error.message);
  }
}

function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/**
 * The folder of the plumber-data the pipeline at `file` loads, as its frames name it (real path):
 * outside node_modules when it is linked from elsewhere (a workspace, `npm link`).
 */
function libraryDir(file: string): string | undefined {
  if (file === '') return undefined;
  try {
    return fs.realpathSync(path.dirname(createRequire(file).resolve('plumber-data/package.json'))) + path.sep;
  } catch {
    return undefined;
  }
}

/**
 * Where the runner's own frames are: its bundle, and (through its source map, or under tsx) its
 * sources. A pipeline's pull loop is the runner's, so an operator's error passes through it.
 */
const PLUMBER_ROOT = path.resolve(__dirname, '..', '..');
const RUNNER_FILES = [path.join(PLUMBER_ROOT, 'dist') + path.sep, path.join(PLUMBER_ROOT, 'src', 'runner') + path.sep];

/**
 * The first `file:line:column` position in a stack trace that is not in node internals, a
 * package, plumber-data or the runner: where the user's code called what threw.
 */
function userFrame(e: unknown, file: string): string | undefined {
  const stack = e instanceof Error ? (e.stack ?? '') : '';
  const library = libraryDir(file);
  for (const line of stack.split('\n').slice(1)) {
    // The path starts the frame's location: `node:internal/modules/cjs/loader:1464:18` holds a
    // `/modules/…` that is no file.
    const m = /(?:\(|\bat )((?:file:\/\/)?\/[^()]*?):(\d+):(\d+)\)?\s*$/.exec(line);
    if (m && !m[1].includes('node_modules') && !m[1].startsWith('node:')) {
      const f = m[1].replace(/^file:\/\//, '');
      if (library !== undefined && f.startsWith(library)) continue;
      if (f === file || !RUNNER_FILES.some((dir) => f.startsWith(dir))) return `${f}:${m[2]}:${m[3]}`;
    }
  }
  return undefined;
}

/** Node starts a module's SyntaxError stack with `path:line` of the line it could not parse. */
function syntaxLine(e: SyntaxError): string | undefined {
  const m = /^(?:file:\/\/)?(\/.*):(\d+)$/.exec((e.stack ?? '').split('\n')[0]!);
  return m ? `${m[1]}:${m[2]}` : undefined;
}

/** Whether the file's first 8 KiB hold a NUL byte, which no source text does. */
function holdsBinary(file: string): boolean {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const head = Buffer.alloc(8192);
      return head.subarray(0, fs.readSync(fd, head, 0, head.length, 0)).includes(0);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

/**
 * An error thrown while importing the user's module: a compile error (esbuild's transform, or a
 * JavaScript SyntaxError) or an exception in the module's top-level code.
 */
export function loadError(e: unknown, file: string): ProfileError {
  const msg = messageOf(e);
  const transform = /Transform failed with \d+ errors?:\n([\s\S]*)/.exec(msg);
  if (transform) {
    return { kind: 'compile', message: `${file} does not compile:\n${transform[1].trim()}\nFix the error above and profile again.` };
  }
  if (e instanceof SyntaxError) {
    if (holdsBinary(file)) return { kind: 'compile', message: `${file} is not a JavaScript or TypeScript file: it holds binary data. Give the pipeline's source file.` };
    const at = syntaxLine(e) ?? userFrame(e, file);
    return { kind: 'compile', message: `${file} does not compile: ${msg}${at ? ` (at ${at})` : ''}. Fix the error and profile again.` };
  }
  const code = (e as { code?: string } | null)?.code;
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
    return { kind: 'load', message: `Loading ${file} failed: ${msg}. Install the missing package or fix the import path.` };
  }
  const at = userFrame(e, file);
  return { kind: 'load', message: `Loading ${file} threw before any pipeline ran: ${msg}${at ? ` (at ${at})` : ''}.` };
}

/** The shape of plumber-data's PipelineError, read structurally: the user's copy may differ from ours. */
interface PipelineErrorLike {
  op?: { kind?: string; site?: CallSite; key?: string };
  index?: number;
  cause?: unknown;
}

/** An error the pipeline threw while it was consumed, with the operator and element when known. */
export function pipelineError(e: unknown, elementsConsumed: number, idOfSite: (site: CallSite) => string): ProfileError {
  const pe = (typeof e === 'object' && e !== null ? e : {}) as PipelineErrorLike;
  const cause = pe.cause !== undefined ? pe.cause : e;
  const causeMsg = messageOf(cause);
  const error: ProfileError = { kind: 'throw', message: '' };
  let where = '';
  if (pe.op && typeof pe.op === 'object') {
    const site = pe.op.site;
    if (site && typeof site.line === 'number') {
      error.site = { file: site.file, line: site.line, column: site.column };
      error.opId = idOfSite(site);
      where = ` in ${pe.op.kind ?? 'an operator'} at ${site.file}:${site.line}:${site.column}`;
    } else if (pe.op.kind) {
      where = ` in ${pe.op.kind}`;
    }
  }
  if (typeof pe.index === 'number') {
    error.elementIndex = pe.index;
    where += ` on element ${pe.index} of its input`;
  }
  error.message = `The pipeline threw${where} after ${elementsConsumed} elements: ${causeMsg}`;
  // From the operator's file, so that the library's own frames are skipped: an operator that
  // refuses its input (unbatch of what is not a batch) is already named at the user's line.
  const frame = userFrame(cause, typeof pe.op?.site?.file === 'string' ? pe.op.site.file : '');
  if (frame) error.message += ` (at ${frame})`;
  return error;
}
