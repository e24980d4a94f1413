/**
 * Reads a literal written in the source (an options object such as `{ hasHeader: true,
 * columnConfigs: { y: { isLabel: true } } }`) into a plain value, without evaluating anything:
 * objects with plain keys, arrays, strings, numbers, booleans, null and undefined. Anything else
 * (a name, a call, a spread, a computed key, a template with substitutions) makes the whole
 * literal unreadable, so a conversion that needs its value refuses rather than guesses.
 */

export type Literal = string | number | boolean | null | undefined | Literal[] | { [key: string]: Literal };

class Unreadable extends Error {}

class Reader {
  i = 0;
  constructor(private readonly text: string) {}

  private space(): void {
    for (;;) {
      const m = /^(?:\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/)/.exec(this.text.slice(this.i));
      if (!m) return;
      this.i += m[0].length;
    }
  }

  private eat(ch: string): boolean {
    this.space();
    if (this.text[this.i] !== ch) return false;
    this.i++;
    return true;
  }

  private string(): string {
    const quote = this.text[this.i]!;
    let out = '';
    for (this.i++; this.i < this.text.length; this.i++) {
      const c = this.text[this.i]!;
      if (c === quote) {
        this.i++;
        return out;
      }
      if (quote === '`' && c === '$' && this.text[this.i + 1] === '{') throw new Unreadable();
      if (c === '\\') {
        const next = this.text[++this.i];
        const escapes: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', b: '\b', f: '\f', v: '\v' };
        if (next === 'u' || next === 'x') throw new Unreadable();
        out += next !== undefined ? (escapes[next] ?? next) : '';
        continue;
      }
      out += c;
    }
    throw new Unreadable();
  }

  private key(): string {
    this.space();
    const c = this.text[this.i];
    if (c === '"' || c === "'") return this.string();
    const m = /^[A-Za-z_$][\w$]*|^\d+(?:\.\d+)?/.exec(this.text.slice(this.i));
    if (!m) throw new Unreadable();
    this.i += m[0].length;
    return m[0];
  }

  value(): Literal {
    this.space();
    const c = this.text[this.i];
    if (c === '{') {
      this.i++;
      const out: { [key: string]: Literal } = {};
      while (!this.eat('}')) {
        const k = this.key();
        if (!this.eat(':')) throw new Unreadable();
        out[k] = this.value();
        if (!this.eat(',')) {
          if (!this.eat('}')) throw new Unreadable();
          break;
        }
      }
      return out;
    }
    if (c === '[') {
      this.i++;
      const out: Literal[] = [];
      while (!this.eat(']')) {
        out.push(this.value());
        if (!this.eat(',')) {
          if (!this.eat(']')) throw new Unreadable();
          break;
        }
      }
      return out;
    }
    if (c === '"' || c === "'" || c === '`') return this.string();
    const m = /^(?:-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|true|false|null|undefined)(?![\w$])/.exec(this.text.slice(this.i));
    if (!m) throw new Unreadable();
    this.i += m[0].length;
    const words: Record<string, Literal> = { true: true, false: false, null: null, undefined: undefined };
    return m[0] in words ? words[m[0]] : Number(m[0]);
  }

  done(): boolean {
    this.space();
    return this.i === this.text.length;
  }
}

/** The value `text` writes, or `{ unreadable: true }` when it is not a plain literal. */
export function readLiteral(text: string): { value: Literal } | { unreadable: true } {
  const r = new Reader(text);
  try {
    const value = r.value();
    return r.done() ? { value } : { unreadable: true };
  } catch (e) {
    if (e instanceof Unreadable) return { unreadable: true };
    throw e;
  }
}

/** A plain object literal (not an array or null). */
export function isRecord(v: Literal): v is { [key: string]: Literal } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
