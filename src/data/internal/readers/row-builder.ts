/**
 * Row objects made from columns on the reader's thread, for chunks a worker thread sent by column
 * (csv.ts's PackedRows, table.ts's PackedTable). Setting each key of a new `{}` in a loop is a
 * keyed store per field; a function compiled once per list of keys builds each row as one object
 * literal, several times cheaper — the rebuilding is the reader thread's whole share of a
 * worker-placed read, so it bounds how much faster than one thread the read can go.
 *
 * The rows are the same as the loop's: own enumerable data properties, in the keys' order (a key
 * given twice keeps its first place and its last value), plain `Object.prototype` objects. Keys
 * the literal would treat otherwise (`__proto__`) fall back to the loop.
 */

/** Builds row `i` from the columns (one per key, in the keys' order). */
export type RowBuilder = (cols: ArrayLike<unknown>[], i: number) => Record<string, unknown>;

const built = new Map<string, RowBuilder>();
/** Lists of keys compiled at most: a reader sees one or a few; a file per schema would grow it without bound. */
const MAX_BUILT = 64;

/** The loop, for keys a literal cannot take. */
function loopBuilder(keys: readonly string[]): RowBuilder {
  return (cols, i) => {
    const o: Record<string, unknown> = {};
    for (let k = 0; k < keys.length; k++) o[keys[k]] = cols[k][i];
    return o;
  };
}

/** The builder for rows with these keys. */
export function rowBuilder(keys: readonly string[]): RowBuilder {
  const id = JSON.stringify(keys);
  let b = built.get(id);
  if (b !== undefined) return b;
  if (keys.includes('__proto__')) b = loopBuilder(keys);
  else {
    // Keys are written as JSON string literals, so no key can be read as code.
    const body = `return {${keys.map((k, j) => `${JSON.stringify(k)}: c[${j}][i]`).join(', ')}};`;
    b = new Function('c', 'i', body) as RowBuilder;
  }
  if (built.size >= MAX_BUILT) built.clear();
  built.set(id, b);
  return b;
}
