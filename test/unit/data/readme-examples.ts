/**
 * The ```typescript examples of a section of src/data/README.md, and how the README tests run
 * one: its `import { … } from 'plumber-data'` bound to the built library, its `console.log` lines
 * collected, to compare with the `// → ` lines the example shows.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from 'esbuild';
import * as lib from 'plumber-data';

const README = join(__dirname, '../../../src/data/README.md');

/** The ```typescript blocks of the section under `heading` (to the next `### `), with the `// → ` lines each must print. */
export function examples(heading: string): { code: string; expected: string[] }[] {
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf(heading);
  assert.ok(start >= 0, `no ${heading} in the README`);
  const section = text.slice(start, text.indexOf('\n### ', start + 1));
  const out: { code: string; expected: string[] }[] = [];
  const fence = /^```typescript\n([\s\S]*?)^```$/gm;
  for (let m = fence.exec(section); m !== null; m = fence.exec(section)) {
    const expected = m[1]
      .split('\n')
      .filter((l) => l.startsWith('// → '))
      .map((l) => l.slice('// → '.length));
    out.push({ code: m[1], expected });
  }
  return out;
}

/** Runs one example in the current directory; what it printed, a line per `console.log`. */
export async function runExample(code: string): Promise<string[]> {
  const printed: string[] = [];
  const body = code.replace(/^import \{([^}]*)\} from 'plumber-data';$/gm, (_m, names: string) => `const {${names}} = lib;`);
  assert.doesNotMatch(body, /^import /m);
  const js = transformSync(`async function example(lib, console) {\n${body}\n}`, { loader: 'ts' }).code;
  const example = new Function(`${js}\nreturn example;`)() as (l: typeof lib, c: Pick<Console, 'log'>) => Promise<void>;
  await example(lib, { log: (...args: unknown[]) => void printed.push(args.map(String).join(' ')) });
  return printed;
}
