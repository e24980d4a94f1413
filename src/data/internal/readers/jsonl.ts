/**
 * JSON Lines as a streamed format: one JSON value per line (LF or CRLF), decoded chunk by chunk.
 * Blank lines are skipped unless `skipEmpty: false`, when they are errors like any line that is
 * not JSON: a FormatError naming the shard and the line.
 */
import { StringDecoder } from 'node:string_decoder';
import type { JsonLinesOptions } from '../../options';
import { FormatError, type ParseClock, type Shard, type StreamFormat } from './format';

export type JsonLinesFormatOptions = Pick<JsonLinesOptions, 'skipEmpty'>;

/** Whitespace only (JSON's own: space, tab, CR, LF). */
function blank(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13 && c !== 10) return false;
  }
  return true;
}

/** The JSON Lines format for these options. */
export function jsonLinesFormat(options: JsonLinesFormatOptions = {}): StreamFormat<unknown> {
  const skipEmpty = options.skipEmpty ?? true;
  return {
    kind: 'jsonLines',
    streamed: true,
    async *parse(bytes: AsyncIterable<Uint8Array>, shard: Shard, clock: ParseClock): AsyncGenerator<unknown[]> {
      const decoder = new StringDecoder('utf8');
      let carry = '';
      let line = 1;
      let first = true;
      const one = (s: string, out: unknown[]): void => {
        if (blank(s)) {
          if (!skipEmpty) throw new FormatError(shard.location, `line ${line}`, 'an empty line is not a JSON value (skipEmpty is false)');
          return;
        }
        try {
          out.push(JSON.parse(s));
        } catch (e) {
          throw new FormatError(shard.location, `line ${line}`, `not JSON: ${(e as Error).message}`);
        }
      };
      const step = (text: string, final: boolean): unknown[] => {
        const t0 = performance.now();
        if (first && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        first = false;
        const out: unknown[] = [];
        let start = 0;
        for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
          one(text.slice(start, nl), out);
          line++;
          start = nl + 1;
        }
        carry = text.slice(start);
        if (final && carry.length > 0) {
          one(carry, out);
          carry = '';
        }
        clock.parsed((performance.now() - t0) / 1000);
        return out;
      };
      for await (const chunk of bytes) {
        const out = step(carry + decoder.write(chunk as Buffer), false);
        if (out.length > 0) yield out;
      }
      const out = step(carry + decoder.end(), true);
      if (out.length > 0) yield out;
    },
  };
}
