/**
 * Where a name sits near a position V8 reported for a call: the one rule plumber-data's call-site
 * capture and the runner's dialect adapters share. No import of the tracing contract, which
 * re-exports it.
 */
import { readFileSync } from 'node:fs';

/** A position in a file: path, 1-based line and column. */
interface Position {
  file: string;
  line: number;
  column: number;
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
export function refine(site: Position, method: string): Position {
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
