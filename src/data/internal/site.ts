/**
 * Call-site capture: where the user wrote an operator, as the 1-based line and column of its
 * method name (the `m` of `.map(`, the `f` of `from(`) in the user's own source. Only done when a
 * tracer or overrides are installed, because `new Error().stack` costs microseconds.
 */
import { dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallSite } from '../tracing';
import { refine } from './siteName';

/**
 * The library's own directory (src/data, or the installed package root). Frames inside it are the
 * library's, not the user's. The bundle lives in dist/, the sources in internal/ or the root.
 */
const LIB_ROOT = ((): string => {
  let d = __dirname;
  for (const leaf of ['ops', 'internal', 'dist']) if (d.endsWith(sep + leaf)) d = dirname(d);
  return d + sep;
})();

const LOCATION = /^(.+):(\d+):(\d+)$/;

/**
 * The location of a V8 frame line: `at fn (file:line:col)` or `at file:line:col`. Function names
 * do not contain ` (`; paths may contain spaces and parentheses.
 */
function frameLocation(line: string): RegExpExecArray | null {
  const text = line.trim();
  if (!text.startsWith('at ')) return null;
  let loc = text.slice(3);
  if (loc.endsWith(')')) {
    const open = loc.indexOf(' (');
    if (open >= 0) loc = loc.slice(open + 2, -1);
  }
  return LOCATION.exec(loc);
}

/** The first stack frame outside plumber-data, or undefined (eval, REPL, native frames only). */
export function captureSite(method: string): CallSite | undefined {
  const saved = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = saved;
  const lines = stack.split('\n');
  for (let i = 1; i < lines.length; i++) {
    const m = frameLocation(lines[i]);
    if (m === null) continue;
    let file = m[1];
    if (file.startsWith('file://')) file = fileURLToPath(file);
    if (file.startsWith('node:') || file.startsWith('internal/') || !file.includes(sep)) continue;
    if (file.startsWith(LIB_ROOT)) continue;
    const line = Number(m[2]);
    const column = Number(m[3]);
    return refine({ file, line, column }, method);
  }
  return undefined;
}
