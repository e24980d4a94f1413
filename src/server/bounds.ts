/**
 * How much of a document the server analyses. Extracting pipelines costs time in proportion to
 * the calls in the file, a little more per call as the file grows, and every feature waits for
 * it: a 5 MB file with 48,000 pipelines took minutes, and the server answered nothing meanwhile.
 * Measured on the 2-core machine at load average ~7 (bench: one-line pipelines of 3 calls, and
 * pipelines of 60 calls): 3,000 calls extract in ~1.4 s, 4,000 in ~2 s, 14,400 in ~6 s. So the
 * graph sees only a prefix of a very large document — whole top-level statements up to a budget
 * of 3,000 calls and 1 MB, about a second and a half on a busy machine — and the features say
 * that the rest of the file was skipped. Ordinary pipeline files hold a few hundred calls. The
 * prefix keeps every position of the document, so ranges, lenses and fixes in it stay exact.
 */
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver';

/** Calls (counted as opening parentheses, a slight over-count) the graph extracts from one document. */
export const MAX_CALLS = 3000;
/** Bytes of one document the graph parses, whatever they hold (a large data literal costs parse time too). */
export const MAX_BYTES = 1024 * 1024;

/** Where the analysed prefix of a document ends, and why. */
export interface Cut {
  /** 0-based line where the skipped part starts. */
  line: number;
  /** Lines in the whole document. */
  lines: number;
  /** The budget the document went over. */
  reason: 'calls' | 'bytes';
}

/** The part of a document the graph analyses: all of it, or a prefix ending before a top-level statement. */
export interface Bounded {
  text: string;
  cut?: Cut;
}

/**
 * A top-level statement starts at column 0 with a word or a decorator (`export`, `const`,
 * `function`, `@Injectable`): continuations of a chain (`.map(…)`), closing brackets and the
 * bodies of blocks are indented or start with punctuation. Formatted code follows this; for
 * code that does not, the cut falls at a line start and the parser recovers from the partial
 * statement, so at worst the one pipeline at the cut is misread.
 */
const STATEMENT_START = /^[A-Za-z_$@]/;

/** The prefix of `text` within the budget: the whole text when it fits. */
export function bound(text: string, budget: { calls: number; bytes: number } = { calls: MAX_CALLS, bytes: MAX_BYTES }): Bounded {
  if (text.length <= budget.bytes && countCalls(text, 0, text.length) <= budget.calls) return { text };
  let calls = 0;
  let statement = 0;
  let statementLine = 0;
  let line = 0;
  let cut: { offset: number; line: number; reason: Cut['reason'] } | undefined;
  for (let start = 0; start < text.length; line++) {
    const newline = text.indexOf('\n', start);
    const end = newline < 0 ? text.length : newline + 1;
    if (STATEMENT_START.test(text.slice(start, start + 1))) {
      statement = start;
      statementLine = line;
    }
    calls += countCalls(text, start, end);
    const reason = end > budget.bytes ? 'bytes' : calls > budget.calls ? 'calls' : undefined;
    if (reason) {
      // Cut before the statement that went over; inside one giant statement, before this line.
      cut = statement > 0 ? { offset: statement, line: statementLine, reason } : { offset: start, line, reason };
      break;
    }
    start = end;
  }
  if (!cut) return { text };
  // Lines as the editor numbers them (a final newline ends the last line, it starts no new one).
  let newlines = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) newlines++;
  const lines = text.endsWith('\n') ? newlines : newlines + 1;
  return { text: text.slice(0, cut.offset), cut: { line: cut.line, lines, reason: cut.reason } };
}

const OPEN_PAREN = '('.charCodeAt(0);

function countCalls(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === OPEN_PAREN) n++;
  return n;
}

/** What was skipped, in one sentence (the diagnostic and the log say the same). */
export function cutMessage(cut: Cut): string {
  const budget = cut.reason === 'calls' ? `${MAX_CALLS.toLocaleString('en-US')} calls` : `${MAX_BYTES / (1024 * 1024)} MB`;
  return (
    `This file is too large for Plumber to analyse whole: it analysed lines 1–${cut.line} (up to ${budget}) and skipped lines ${cut.line + 1}–${cut.lines}. ` +
    'Pipelines in the skipped part get no lenses, hints, lints or fixes; move them to a smaller file to see them.'
  );
}

/** The diagnostic at the first skipped line. */
export function cutDiagnostic(cut: Cut, source: string): Diagnostic {
  return {
    range: { start: { line: cut.line, character: 0 }, end: { line: cut.line, character: 0 } },
    severity: DiagnosticSeverity.Information,
    source,
    code: 'plumber/file-too-large',
    message: cutMessage(cut),
  };
}
