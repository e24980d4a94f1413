/**
 * What cache(path) says when the file at its path cannot be used: damaged (plumber-data wrote it:
 * delete it), foreign (someone else's: never overwritten), or an fs call that failed (the file,
 * what was being done, and what to do).
 */
import { describeThrown, PipelineError, type OpRef } from '../../errors';

/** Why a cache file written by plumber-data cannot be read, and what to do: delete it. */
export function damaged(op: OpRef, path: string, what: string): PipelineError {
  const msg = `the cache file ${path} ${what}. plumber-data wrote it: delete it, and the next complete pass rebuilds it.`;
  return new PipelineError(op, undefined, new Error(msg), msg);
}

/** A file at the cache's path that plumber-data did not write: never advise deleting it. */
export function foreign(op: OpRef, path: string, what: string): PipelineError {
  const msg = `${path} is not a plumber-data cache file (${what}), so cache(path) will neither read nor overwrite it. Give cache() a path of its own.`;
  return new PipelineError(op, undefined, new Error(msg), msg);
}

/** What to do about an fs call on the cache's file that failed with `code`. */
const IO_ADVICE: Record<string, string> = {
  EACCES: 'This process may not do that: give it the permission, or give cache() a path of its own.',
  EPERM: 'This process may not do that (in a sticky directory such as /tmp, only the owner of a file may replace it): give cache() a path of its own.',
  ENOSPC: 'The disk is full: free space on it, or give cache() a path on another disk.',
  EDQUOT: 'The disk quota is used up: free space in it, or give cache() a path on another disk.',
  EFBIG: 'The file is larger than this process may write (ulimit -f): raise the limit, or cache fewer or smaller elements.',
  EROFS: 'The file system is read-only: give cache() a path on a writable disk.',
  EISDIR: 'A directory is in the way: give cache() a path of its own.',
  ENOTEMPTY: 'A directory is in the way: give cache() a path of its own.',
  EIO: 'The disk reported an error: check it, or give cache() a path on another disk.',
};

/**
 * An fs call on a cache file that failed, as the person sees it: the file, what was being done,
 * the system's words, and what to do. Only ENOENT at the first look means "no cache yet"; every
 * other failure is this error, never a reason to recompute or overwrite.
 */
export function ioFailed(op: OpRef, path: string, doing: 'read' | 'write' | 'close' | 'rename into place', e: unknown): PipelineError {
  const code = (e as { code?: unknown } | null)?.code;
  const advice = typeof code === 'string' && Object.hasOwn(IO_ADVICE, code) ? IO_ADVICE[code] : 'Check the file and its directory, or give cache() another path.';
  const kept = doing === 'read' || doing === 'close' ? '' : ' Nothing was kept: the next complete pass writes it again.';
  const msg = `cannot ${doing} the cache file ${path}: ${describeThrown(e)}. ${advice}${kept}`;
  return new PipelineError(op, undefined, e, msg);
}

/** Why what is at a cache's path is no file to read, or null for a regular file. */
export function notAFile(st: { isFile(): boolean; isDirectory(): boolean }): string | null {
  if (st.isFile()) return null;
  return st.isDirectory() ? 'it is a directory' : 'it is not a regular file';
}
