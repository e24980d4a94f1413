/**
 * The examples bench:dialects measures: each with the file and export a user would profile, the
 * hand-tuned sibling under `hand/` (same export name, same elements), and how long a run must be
 * to see enough elements. Where each example's bottleneck is written is not here: the example
 * marks that line itself with a `// bottleneck` comment (see `markedBottleneck`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '..', '..');

export interface DialectExample {
  name: string;
  dialect: 'tfjs-data' | 'node-streams' | 'async-generator';
  /** The pipeline file, absolute. */
  file: string;
  exportName: string;
  /** The hand-tuned variant, absolute; it exports `exportName` too. */
  hand: string;
  /** Measured window per run, seconds (an example yielding a batch a second needs a longer one). */
  seconds: number;
  /** Warm-up per run, seconds: worker pools and tsx in each thread start in it. */
  warmupSeconds: number;
}

const example = (name: string, dialect: DialectExample['dialect'], exportName: string, seconds = 3, warmupSeconds = 2): DialectExample => ({
  name,
  dialect,
  file: join(ROOT, 'examples', name, 'pipeline.ts'),
  exportName,
  hand: join(ROOT, 'bench', 'dialects', 'hand', `${name}.ts`),
  seconds,
  warmupSeconds,
});

export const EXAMPLES: readonly DialectExample[] = [
  example('tfjs-digits', 'tfjs-data', 'trainingData'),
  example('tfjs-remote', 'tfjs-data', 'trips', 5),
  example('streams-lookup', 'node-streams', 'userRows'),
  example('streams-transform', 'node-streams', 'reviewFeatures'),
  example('generators', 'async-generator', 'trainingBatches'),
];

/** Where an example says its bottleneck is: the one line of its folder's `.ts` files that ends in a `// bottleneck` comment. */
export function markedBottleneck(e: DialectExample): { file: string; line: number } {
  const dir = join(e.file, '..');
  const marks: Array<{ file: string; line: number }> = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
    readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .forEach((text, i) => {
        if (/\/\/\s*bottleneck\s*$/.test(text)) marks.push({ file: join(dir, f), line: i + 1 });
      });
  }
  if (marks.length !== 1) throw new Error(`examples/${e.name} must mark exactly one line with a \`// bottleneck\` comment; it marks ${marks.length}.`);
  return marks[0]!;
}
