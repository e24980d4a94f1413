/**
 * CSV (RFC 4180) as a streamed format: quoted fields (which may hold the delimiter, line breaks and
 * doubled quotes), LF or CRLF line ends, an optional header row, any one-character delimiter, and
 * typed columns. Empty lines between records are skipped. Every record must have as many fields as
 * the header (or, without one, as the first record); anything else is a FormatError naming the
 * shard and the line the record starts on.
 *
 * The parser is this library's own: csv-parse's streaming API, the usual choice, ran at 15 MB/s on
 * this machine; a scan of char codes with `indexOf` for quoted runs is several times faster. Text
 * is decoded chunk by chunk; a record cut by a chunk boundary is carried into the next chunk.
 */
import { columnSlice, unpackedRows, type Unpacked } from './columns-packed';
import { StringDecoder } from 'node:string_decoder';
import type { CsvOptions } from '../../options';
import { FormatError, type ParseClock, type Shard, type StreamFormat } from './format';

export type CsvType = 'string' | 'number' | 'int' | 'boolean';
export type CsvRow = Record<string, string | number | boolean> | (string | number | boolean)[];

/** The options a CSV format needs (they cross to worker threads as they are). */
export type CsvFormatOptions = Pick<CsvOptions, 'header' | 'delimiter' | 'schema'>;

const QUOTE = 34;
const LF = 10;
const CR = 13;

/** Records parsed from one stretch of text, and where the unparsed rest starts. */
interface Parsed {
  records: string[][];
  /** Line (1-based) each record starts on. */
  lines: number[];
  /** Index in the text of the first character not consumed (the start of a cut record). */
  rest: number;
  /** Line the rest starts on. */
  restLine: number;
}

/**
 * Splits `text` into records. Without `final`, a record that may continue past the end of the
 * text (no line end after it yet, or an open quote) is left for the next call.
 */
export function parseCsvText(text: string, delimiter: number, line: number, final: boolean, location: string): Parsed {
  const records: string[][] = [];
  const lines: number[] = [];
  const n = text.length;
  let i = 0;
  records: while (i < n) {
    const recStart = i;
    const recLine = line;
    const fields: string[] = [];
    for (;;) {
      if (i < n && text.charCodeAt(i) === QUOTE) {
        let j = i + 1;
        let seg = j;
        let value = '';
        for (;;) {
          const q = text.indexOf('"', j);
          if (q < 0 || (q + 1 >= n && !final)) {
            if (!final) return { records, lines, rest: recStart, restLine: recLine };
            throw new FormatError(location, `line ${line}`, 'a quoted field opened on this line is never closed (unclosed quote)');
          }
          if (q + 1 < n && text.charCodeAt(q + 1) === QUOTE) {
            value += text.slice(seg, q + 1);
            j = q + 2;
            seg = j;
            continue;
          }
          value += text.slice(seg, q);
          // Line breaks inside the quotes are lines of the file.
          for (let k = text.indexOf('\n', i); k >= 0 && k < q; k = text.indexOf('\n', k + 1)) line++;
          i = q + 1;
          break;
        }
        fields.push(value);
        if (i >= n) {
          if (!final) return { records, lines, rest: recStart, restLine: recLine };
          break;
        }
        const ch = text.charCodeAt(i);
        if (ch === delimiter) {
          i++;
          continue;
        }
        if (ch !== LF && ch !== CR) throw new FormatError(location, `line ${line}`, `unexpected '${text[i]}' after a closing quote (a quote inside a quoted field is written twice: "")`);
      } else {
        let j = i;
        while (j < n) {
          const ch = text.charCodeAt(j);
          if (ch === delimiter || ch === LF || ch === CR) break;
          j++;
        }
        if (j >= n && !final) return { records, lines, rest: recStart, restLine: recLine };
        fields.push(text.slice(i, j));
        i = j;
        if (i < n && text.charCodeAt(i) === delimiter) {
          i++;
          continue;
        }
      }
      // The record ends here: at a line end (LF, CRLF or CR) or the end of the text.
      if (i < n) {
        if (text.charCodeAt(i) === CR) {
          if (i + 1 >= n && !final) return { records, lines, rest: recStart, restLine: recLine };
          i++;
          if (i < n && text.charCodeAt(i) === LF) i++;
        } else i++;
        line++;
      }
      if (fields.length === 1 && fields[0] === '' && text.charCodeAt(recStart) !== QUOTE) continue records;
      records.push(fields);
      lines.push(recLine);
      break;
    }
  }
  return { records, lines, rest: n, restLine: line };
}

/** A typed value from a field, or an error naming the column, the value and what was expected. */
function typed(v: string, type: CsvType, column: string, location: string, line: number): string | number | boolean {
  switch (type) {
    case 'string':
      return v;
    case 'number': {
      if (v === '' || v === 'NaN') return NaN;
      const x = Number(v);
      if (Number.isNaN(x) || v.trim() === '') throw new FormatError(location, `line ${line}`, `column '${column}': '${v}' is not a number`);
      return x;
    }
    case 'int': {
      if (!/^\s*[+-]?\d+\s*$/.test(v)) throw new FormatError(location, `line ${line}`, `column '${column}': '${v}' is not an integer`);
      const x = Number(v);
      if (!Number.isSafeInteger(x)) throw new FormatError(location, `line ${line}`, `column '${column}': ${v} is too large for an exact integer`);
      return x;
    }
    case 'boolean': {
      const s = v.trim().toLowerCase();
      if (s === 'true' || s === '1') return true;
      if (s === 'false' || s === '0') return false;
      throw new FormatError(location, `line ${line}`, `column '${column}': '${v}' is not a boolean (true/false/1/0)`);
    }
  }
}

/** Turns records into rows: checks the field count, applies the schema, keys by the header. */
class Rows {
  private columns: string[] | null;
  private width = -1;
  private types: (CsvType | undefined)[] | null = null;
  private readonly readsHeader: boolean;
  constructor(
    private readonly options: CsvFormatOptions,
    private readonly location: string,
  ) {
    const h = options.header ?? true;
    this.columns = Array.isArray(h) ? [...(h as readonly string[])] : null;
    this.readsHeader = h === true;
    if (this.columns !== null) this.setWidth(this.columns.length);
  }
  private setWidth(w: number): void {
    this.width = w;
    const schema = this.options.schema;
    if (schema === undefined) return;
    const names = this.columns ?? Array.from({ length: w }, (_, k) => String(k));
    for (const key of Object.keys(schema)) {
      if (!names.includes(key)) throw new FormatError(this.location, 'line 1', `the schema names column '${key}', which the file does not have (columns: ${names.join(', ')})`);
    }
    this.types = names.map((c) => (schema[c] === 'string' ? undefined : schema[c]));
  }
  /** False for the header row (which sets the columns); the first record sets the width, and every data record must have it. */
  private isData(f: string[], line: number): boolean {
    if (this.width < 0) {
      // The header's names first: setWidth checks the schema against them.
      if (this.readsHeader) this.columns = f;
      this.setWidth(f.length);
      if (this.readsHeader) return false;
    }
    if (f.length !== this.width) throw new FormatError(this.location, `line ${line}`, `expected ${this.width} fields, found ${f.length}`);
    return true;
  }
  add(records: string[][], lines: number[], out: CsvRow[]): void {
    for (let r = 0; r < records.length; r++) {
      const f = records[r];
      if (!this.isData(f, lines[r])) continue;
      const types = this.types;
      const cols = this.columns;
      if (cols === null) {
        if (types === null) out.push(f);
        else out.push(f.map((v, k) => (types[k] === undefined ? v : typed(v, types[k] as CsvType, String(k), this.location, lines[r]))));
        continue;
      }
      const o: Record<string, string | number | boolean> = {};
      for (let k = 0; k < cols.length; k++) {
        const t = types === null ? undefined : types[k];
        o[cols[k]] = t === undefined ? f[k] : typed(f[k], t, cols[k], this.location, lines[r]);
      }
      out.push(o);
    }
  }
  /** The data records among `records`, checked and typed in file order, packed by column (see PackedRows); null when there are none. */
  pack(records: string[][], lines: number[]): PackedRows | null {
    const n = records.length;
    let count = 0;
    let cols: (string[] | Float64Array | Uint8Array)[] | null = null;
    for (let r = 0; r < n; r++) {
      const f = records[r];
      if (!this.isData(f, lines[r])) continue;
      const types = this.types;
      cols ??= Array.from({ length: this.width }, (_, k) => (types === null || types[k] === undefined ? [] : types[k] === 'boolean' ? new Uint8Array(n) : new Float64Array(n)));
      for (let k = 0; k < f.length; k++) {
        const col = cols[k];
        if (Array.isArray(col)) col.push(f[k]);
        else {
          const t = (types as CsvType[])[k];
          const v = typed(f[k], t, this.columns === null ? String(k) : this.columns[k], this.location, lines[r]);
          col[count] = t === 'boolean' ? (v ? 1 : 0) : (v as number);
        }
      }
      count++;
    }
    if (cols === null || count === 0) return null;
    const columns = cols.map((col): PackedColumn => {
      if (Array.isArray(col)) {
        // A plain loop: Int32Array.from with a map fn went through the iterator protocol, and cost more than the parse.
        const lengths = new Int32Array(col.length);
        for (let i = 0; i < col.length; i++) lengths[i] = col[i].length;
        return { t: 's', text: col.join(''), lengths };
      }
      return col instanceof Uint8Array ? { t: 'b', v: col.slice(0, count) } : { t: 'n', v: col.slice(0, count) };
    });
    return { keys: this.columns === null ? null : [...this.columns], count, columns };
  }
}

function delimiterOf(options: CsvFormatOptions): number {
  const delim = options.delimiter ?? ',';
  if (delim.length !== 1 || delim === '"' || delim === '\n' || delim === '\r') throw new RangeError(`csv() needs a one-character delimiter other than a quote or a line break, not ${JSON.stringify(delim)}.`);
  return delim.charCodeAt(0);
}

/** A shard's records (fields as text) with the line each starts on, one batch per chunk of bytes; parsing time goes to `clock`. */
async function* csvRecords(bytes: AsyncIterable<Uint8Array>, delimiter: number, shard: Shard, clock: ParseClock): AsyncGenerator<{ records: string[][]; lines: number[] }> {
  const decoder = new StringDecoder('utf8');
  let carry = '';
  let line = 1;
  let first = true;
  const step = (text: string, final: boolean): { records: string[][]; lines: number[] } => {
    const t0 = performance.now();
    if (first && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    first = false;
    const p = parseCsvText(text, delimiter, line, final, shard.location);
    carry = p.rest < text.length ? text.slice(p.rest) : '';
    line = p.restLine;
    clock.parsed((performance.now() - t0) / 1000);
    return p;
  };
  for await (const chunk of bytes) {
    const p = step(carry + decoder.write(chunk as Buffer), false);
    if (p.records.length > 0) yield p;
  }
  const p = step(carry + decoder.end(), true);
  if (p.records.length > 0) yield p;
}

/** The CSV format for these options. */
export function csvFormat(options: CsvFormatOptions = {}): StreamFormat<CsvRow> {
  const delimiter = delimiterOf(options);
  return {
    kind: 'csv',
    streamed: true,
    async *parse(bytes: AsyncIterable<Uint8Array>, shard: Shard, clock: ParseClock): AsyncGenerator<CsvRow[]> {
      const rows = new Rows(options, shard.location);
      for await (const p of csvRecords(bytes, delimiter, shard, clock)) {
        const t0 = performance.now();
        const out: CsvRow[] = [];
        rows.add(p.records, p.lines, out);
        clock.parsed((performance.now() - t0) / 1000);
        if (out.length > 0) yield out;
      }
    },
  };
}

/** One column of a packed chunk: numbers and booleans in typed arrays, strings as one text with their lengths. */
export type PackedColumn = { t: 'n'; v: Float64Array } | { t: 'b'; v: Uint8Array } | { t: 's'; text: string; lengths: Int32Array };

/**
 * Rows as they cross from a worker thread, column by column (typed arrays moved, not copied).
 * Posting row objects cost the receiving thread more (a structured clone rebuilds each object
 * and string) than parsing the CSV there; columns leave it only the objects to build.
 */
export interface PackedRows {
  /** The rows' keys, or null for rows that are arrays. */
  keys: string[] | null;
  count: number;
  columns: PackedColumn[];
}

/** The CSV format as a worker thread runs it: chunks of rows packed by column (one PackedRows per element). */
export function csvPackedFormat(options: CsvFormatOptions = {}): StreamFormat<PackedRows> {
  const delimiter = delimiterOf(options);
  return {
    kind: 'csv',
    streamed: true,
    async *parse(bytes: AsyncIterable<Uint8Array>, shard: Shard, clock: ParseClock): AsyncGenerator<PackedRows[]> {
      const rows = new Rows(options, shard.location);
      for await (const p of csvRecords(bytes, delimiter, shard, clock)) {
        const t0 = performance.now();
        const packed = rows.pack(p.records, p.lines);
        clock.parsed((performance.now() - t0) / 1000);
        if (packed !== null) yield [packed];
      }
    },
  };
}

/** The buffers of a packed chunk, to move with it. */
export function packedBuffers(p: PackedRows): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const c of p.columns) {
    if (c.t === 'n' || c.t === 'b') out.push(c.v.buffer as ArrayBuffer);
    else if (c.t === 's') out.push(c.lengths.buffer as ArrayBuffer);
  }
  return out;
}

/** The rows of a packed chunk, made a range at a time (objects through a compiled builder, see row-builder.ts). */
export function unpackRows(p: PackedRows): Unpacked {
  return unpackedRows(p.keys, p.columns.map(columnSlice), p.count);
}
