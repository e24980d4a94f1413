/** Files for the readers' tests, made by real tools (python3's csv/json modules, gzip, head) in a fresh directory. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory, and a function that removes it. */
export function tempDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'plumber-readers-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs a python3 program with `args` as sys.argv[1:]. */
export function python(program: string, ...args: string[]): string {
  return execFileSync('python3', ['-c', program, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
}

/** Writes `rows` (JSON) as a CSV file with Python's csv module (CRLF line ends, minimal quoting). */
export function writeCsvWithPython(path: string, rows: unknown[][], dialect: { delimiter?: string } = {}): void {
  python(
    'import csv, json, sys\nrows = json.loads(sys.argv[2])\nwith open(sys.argv[1], "w", newline="") as f:\n  csv.writer(f, delimiter=sys.argv[3]).writerows(rows)',
    path,
    JSON.stringify(rows),
    dialect.delimiter ?? ',',
  );
}

/** gzip's command line: compresses `path` to `path.gz`, keeping the original. */
export function gzipFile(path: string): string {
  execFileSync('gzip', ['-kf', path]);
  return `${path}.gz`;
}

/** The first `bytes` bytes of `path` into `out` (`head -c`): a truncated file. */
export function truncate(path: string, bytes: number, out: string): void {
  execFileSync('sh', ['-c', `head -c ${bytes} "$0" > "$1"`, path, out]);
}

/**
 * The order the readers document over shards of `sizes` elements read `p` at a time, as `shard:index`
 * keys: a cycle of p shards, one element from each in turn; a shard found ended ends its turn, and
 * the next shard takes its place from the place's next turn.
 */
export function cycleOrder(sizes: number[], p: number): string[] {
  const next = sizes.map(() => 0);
  const out: string[] = [];
  let open = sizes.slice(0, p).map((_, k) => k);
  let nextShard = open.length;
  let turn = 0;
  while (open.length > 0) {
    const i = turn % open.length;
    const k = open[i];
    if (next[k] < sizes[k]) {
      out.push(`${k}:${next[k]++}`);
      turn = i + 1;
    } else if (nextShard < sizes.length) {
      open[i] = nextShard++;
      turn = i + 1;
    } else open = open.filter((_, j) => j !== i);
  }
  return out;
}
