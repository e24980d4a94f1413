/**
 * `tf.data.csv(url, csvConfig)` → plumber-data's `csv(path, { header, delimiter, schema })`, with
 * the element shape tfjs gives. Rules, from tfjs-data's CSVDataset:
 * - tfjs parses a value without a `dtype` as a number when it looks like one and keeps it as
 *   text otherwise, value by value, and its `'string'` dtype does the same: plumber-data's schema
 *   gives a column one type. Only columns with a `float32`, `int32` or `bool` dtype convert, so
 *   every column read must have one (`configuredColumnsOnly: true`, or `columnNames` all
 *   configured); anything else is refused with the column named.
 * - `float32` is a `'number'` column; `int32` a `'number'` column floored (tfjs floors it); `bool`
 *   is 1 for `'1'` or `'true'` in any case, else 0 (tfjs's numbers), read as text and compared.
 * - An element is an object of the columns read; with a column marked `isLabel` it is
 *   `{ xs, ys }`, the labels in `ys` and the rest in `xs`. The converted chain builds that shape
 *   in a map after the reader, in `columnNames` order (else `columnConfigs` order).
 * - `hasHeader` (default true) and `columnNames`: the header names the columns, or the names do
 *   and every row is data; with both, the header row is skipped. `delimiter` is the same;
 *   `delimWhitespace` and a column `default` have no counterpart and are refused.
 * - `file://` URLs become paths (resolved against the working directory, as tfjs's file source
 *   resolves them); http(s) URLs stay URLs.
 * What differs unseen is said in a note: an empty field (tfjs: undefined, its default, or an error
 * for a required or label column) reads as NaN (a bool column: 0), and a malformed number is an
 * error naming file and line where tfjs hands on the text.
 */
import { quoted } from '../fixes/edits';
import type { GraphOp } from '../graph/types';
import { isRecord, readLiteral, type Literal } from './literal';
import { opArgs } from './text';

const DTYPES = new Set(['float32', 'int32', 'bool']);

/** The converted source: its text with any extra options (a plan's knobs), and what differs unseen. */
export interface CsvSource {
  source(options: Array<[string, string]>): string;
  notes: string[];
}

const IDENT = /^[A-Za-z_$][\w$]*$/;

function key(name: string): string {
  return IDENT.test(name) ? name : quoted(name);
}

function access(v: string, name: string): string {
  return IDENT.test(name) ? `${v}.${name}` : `${v}[${quoted(name)}]`;
}

/** The path or URL plumber-data reads for tfjs's `url`, or why not. */
function pathOf(url: Literal): string | { reason: string } {
  if (typeof url !== 'string') return { reason: 'tf.data.csv is not given its URL as a string literal, so the conversion cannot tell a file from a URL.' };
  if (/^https?:\/\//i.test(url)) return url;
  if (url.startsWith('file://')) return url.slice('file://'.length);
  return { reason: `tf.data.csv reads ${url} through a source the conversion does not know (only file:// and http(s):// URLs convert).` };
}

type ColumnConfig = { dtype?: Literal; isLabel?: Literal; required?: Literal; default?: Literal };

/** The columns read, in order, each with its config, or why they cannot be known statically. */
function columnsOf(config: { [key: string]: Literal }): Array<[string, ColumnConfig]> | string {
  const configs = config['columnConfigs'];
  if (configs !== undefined && !isRecord(configs)) return 'its columnConfigs are not a literal object';
  const names = config['columnNames'];
  if (names !== undefined && !(Array.isArray(names) && names.every((n) => typeof n === 'string'))) return 'its columnNames are not a literal array of strings';
  const configured = Object.entries(configs ?? {});
  if (config['configuredColumnsOnly'] === true) {
    if (configured.length === 0) return 'configuredColumnsOnly is set without columnConfigs';
    const order = names ? (names as string[]).filter((n) => configs?.[n] !== undefined) : configured.map(([n]) => n);
    return order.map((n) => [n, (configs?.[n] ?? {}) as ColumnConfig]);
  }
  if (names) {
    const missing = (names as string[]).find((n) => configs?.[n] === undefined);
    if (missing === undefined) return (names as string[]).map((n) => [n, configs![n] as ColumnConfig]);
  }
  return 'tfjs reads a column without a dtype as a number or as text, value by value, which a typed column cannot repeat: give every column it reads a dtype (columnConfigs with configuredColumnsOnly: true)';
}

/**
 * The value the converted map gives a column, as tfjs would parse it. Written to type-check in a
 * TypeScript file (a row's values are typed as any column's) and to run as JavaScript: `Number` and
 * `String` of a value already of that type change nothing.
 */
function parsedValue(name: string, dtype: string): string {
  const v = access('row', name);
  if (dtype === 'int32') return `Math.floor(Number(${v}))`;
  if (dtype === 'bool') return `String(${v}) === '1' || String(${v}).toLowerCase() === 'true' ? 1 : 0`;
  return v;
}

/** `tf.data.csv(…)` as plumber-data's csv and a map to tfjs's element shape, or why it cannot be faithful. */
export function tfjsCsvSource(sourceOp: GraphOp, text: string): CsvSource | string {
  const args = opArgs(sourceOp, text);
  if (args.length < 1 || args.length > 2) return `${sourceOp.label} takes a URL and an optional csvConfig to be converted.`;
  const urlRead = readLiteral(args[0]!.text);
  const path = pathOf('value' in urlRead ? urlRead.value : undefined);
  if (typeof path !== 'string') return path.reason;
  const configRead = args[1] ? readLiteral(args[1].text) : { value: {} };
  if (!('value' in configRead) || !isRecord(configRead.value)) return `${sourceOp.label}'s csvConfig is not written as a literal object, so the conversion cannot read its columns.`;
  const config = configRead.value;
  if (config['delimWhitespace'] === true) return `${sourceOp.label} splits on whitespace (delimWhitespace), which plumber-data's csv does not.`;
  const columns = columnsOf(config);
  if (typeof columns === 'string') return `${sourceOp.label} cannot be converted faithfully: ${columns}.`;
  const schema: Array<[string, string]> = [];
  for (const [name, c] of columns) {
    if (!isRecord(c as Literal)) return `${sourceOp.label}: the config of column ${name} is not a literal object.`;
    if (typeof c.dtype !== 'string' || !DTYPES.has(c.dtype)) {
      return `${sourceOp.label} cannot be converted faithfully: column ${name} has ${c.dtype === undefined ? 'no dtype' : `dtype ${String(c.dtype)}`}, which tfjs reads as a number or as text value by value; give it dtype float32, int32 or bool.`;
    }
    if (c.default !== undefined) return `${sourceOp.label} cannot be converted faithfully: column ${name} has a default for empty fields, which plumber-data's csv does not.`;
    schema.push([name, c.dtype === 'bool' ? 'string' : 'number']);
  }
  const hasHeader = config['hasHeader'] !== false;
  const names = config['columnNames'] as string[] | undefined;
  if (!hasHeader && !names) return `${sourceOp.label} has no header and no columnNames, which tfjs refuses.`;
  const options: Array<[string, string]> = [['header', names ? `[${names.map((n) => quoted(n)).join(', ')}]` : 'true']];
  if (typeof config['delimiter'] === 'string' && config['delimiter'] !== ',') options.push(['delimiter', quoted(config['delimiter'])]);
  options.push(['schema', `{ ${schema.map(([n, t]) => `${key(n)}: '${t}'`).join(', ')} }`]);
  const labels = columns.filter(([, c]) => c.isLabel === true).map(([n]) => n);
  const field = ([n, c]: [string, ColumnConfig]) => `${key(n)}: ${parsedValue(n, String(c.dtype))}`;
  const xs = `{ ${columns
    .filter(([n]) => !labels.includes(n))
    .map(field)
    .join(', ')} }`;
  const shape =
    labels.length > 0
      ? `({ xs: ${xs}, ys: { ${columns
          .filter(([n]) => labels.includes(n))
          .map(field)
          .join(', ')} } })`
      : `(${xs})`;
  const skipHeader = hasHeader && names ? '.skip(1)' : '';
  const notes = [
    'An empty field reads as NaN (in a bool column as 0) where tfjs gives undefined, the column’s default, or an error for a required or label column; a value that is not a number is an error naming the file and line where tfjs hands on the text.',
  ];
  return {
    source: (extra) => {
      const all = [...options, ...extra.filter(([k]) => !options.some(([o]) => o === k))];
      return `csv(${quoted(path)}, { ${all.map(([k, v]) => `${k}: ${v}`).join(', ')} })${skipHeader}.map((row) => ${shape})`;
    },
    notes,
  };
}
