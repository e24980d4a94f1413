/**
 * Call-site capture: where the user wrote an operator, as the 1-based line and column of its
 * method name (the `m` of `.map(`, the `f` of `from(`) in the user's own source. Only done when a
 * tracer or overrides are installed, because `new Error().stack` costs microseconds.
 */
import { readFileSync } from 'node:fs';
import { dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
/** A call site, as `tracing.ts`'s `CallSite` (spelt here so this file does not import the module that re-exports it). */
interface CallSite {
  file: string;
  line: number;
  column: number;
}

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

const sources = new Map<string, string[] | null>();

function sourceLines(file: string): string[] | null {
  let lines = sources.get(file);
  if (lines === undefined) {
    try {
      lines = readFileSync(file, 'utf8').split('\n');
    } catch {
      lines = null;
    }
    sources.set(file, lines);
  }
  return lines;
}

/**
 * Source maps (tsx, bundlers) and V8 do not always point at the method name itself: a mapping may
 * land on the receiver or the start of the statement. When the reported position does not hold the
 * method name, look for `method` as a whole word at or after it (a few lines at most), so the site
 * matches what an editor sees in the file.
 */
export function refine(site: CallSite, method: string): CallSite {
  const lines = sourceLines(site.file);
  if (lines === null) return site;
  const isWord = (c: string | undefined): boolean => c !== undefined && /[\w$]/.test(c);
  const at = (l: number, c: number): boolean => {
    const text = lines[l];
    return text !== undefined && text.startsWith(method, c) && !isWord(text[c - 1]) && !isWord(text[c + method.length]);
  };
  if (at(site.line - 1, site.column - 1)) return site;
  for (let l = site.line - 1; l < Math.min(lines.length, site.line + 4); l++) {
    const text = lines[l];
    let c = l === site.line - 1 ? site.column - 1 : 0;
    for (;;) {
      c = text.indexOf(method, c);
      if (c < 0) break;
      if (at(l, c)) return { file: site.file, line: l + 1, column: c + 1 };
      c += method.length;
    }
  }
  return site;
}
