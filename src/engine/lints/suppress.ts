/**
 * Suppression comments, read the same way by the editor's diagnostics and by `plumber lint`:
 *
 *   // plumber-disable-next-line plumber/cache-after-random, shuffle-after-batch -- why
 *   ds.cache();  // plumber-disable-line cache-after-random
 *   // plumber-disable no-prefetch-at-end            (anywhere in the file: the whole file)
 *
 * A directive names rules with or without the `plumber/` prefix, separated by commas or spaces;
 * one that names none silences every rule. Text after ` -- ` is the reason, for people. Block
 * comments (`/* plumber-disable-line … *\/`) work too. A finding belongs to the line its operator's
 * name starts on (`map` in `.map(`), so a chain written over several lines is silenced line by line.
 */

/** Every rule, or the rule ids named. */
export type RuleSet = 'all' | ReadonlySet<string>;

export interface Suppressions {
  /** Rules silenced in the whole file (`plumber-disable`). */
  file: RuleSet | undefined;
  /** Rules silenced on a line (0-based, as LSP ranges count), from `-line` and `-next-line` directives. */
  lines: Map<number, RuleSet>;
}

/** A directive in a `//` or `/*` comment: its kind, then the rules up to the end of the comment. */
const DIRECTIVE = /(?:\/\/|\/\*)\s*plumber-disable(-next-line|-line)?(?=[\s,]|\*\/|$)(.*?)(?:\*\/|$)/;

/** The rule ids a directive's text names, `plumber/` added where it is left out; 'all' when it names none. */
export function parseRules(text: string): RuleSet {
  const names = text
    .split(/\s--\s|^--\s/)[0]!
    .split(/[\s,]+/)
    .filter((s) => s.length > 0)
    .map((s) => (s.startsWith('plumber/') ? s : `plumber/${s}`));
  return names.length === 0 ? 'all' : new Set(names);
}

function union(a: RuleSet | undefined, b: RuleSet): RuleSet {
  if (a === undefined) return b;
  if (a === 'all' || b === 'all') return 'all';
  return new Set([...a, ...b]);
}

/** The suppression comments of a file's text. */
export function parseSuppressions(text: string): Suppressions {
  const out: Suppressions = { file: undefined, lines: new Map() };
  if (!text.includes('plumber-disable')) return out;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const m = DIRECTIVE.exec(lines[i]!);
    if (!m) continue;
    const rules = parseRules(m[2] ?? '');
    if (m[1] === undefined) out.file = union(out.file, rules);
    else {
      const line = m[1] === '-next-line' ? i + 1 : i;
      out.lines.set(line, union(out.lines.get(line), rules));
    }
  }
  return out;
}

function covers(set: RuleSet | undefined, rule: string): boolean {
  return set !== undefined && (set === 'all' || set.has(rule));
}

/** Whether a finding of `rule` whose range starts on `line` (0-based) is silenced. */
export function isSuppressed(s: Suppressions, rule: string, line: number): boolean {
  return covers(s.file, rule) || covers(s.lines.get(line), rule);
}
