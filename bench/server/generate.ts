/** Generated workspaces for the server benchmark: realistic pipeline files of a given size. */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** One pipeline of about 50 lines: an exported transform, a helper and a multi-line chain. */
function pipelineBlock(i: number, importFrom?: string): string {
  const helper = Array.from({ length: 24 }, (_, k) => `  h = Math.imul(h ^ ${k + i}, 0x01000193) | 0; // step ${k}`).join('\n');
  return `
/** Transform ${i}: JIT-stable integer work. */
export function transform${i}(x: number): number {
  let h = (x | 0) + ${i};
${helper}
  return h;
}

const base${i} = ${importFrom ? `${importFrom}.map(transform${i})` : `range(10_000)`};

export const pipeline${i} = base${i}
  .map(transform${i}, { parallelism: 2 })
  .filter((x) => x % 3 !== 0)
  .shuffle(256, { seed: ${i} })
  .batch(32)
  .prefetch(2);
`;
}

/** A file of `pipelines` pipelines, padded to about `lines` lines. */
export function pipelineFile(pipelines: number, lines: number, header = "import { range } from 'plumber-data';\n"): string {
  let text = header;
  for (let i = 0; i < pipelines; i++) text += pipelineBlock(i);
  let n = text.split('\n').length;
  while (n < lines) {
    text += `// padding line ${n}\n`;
    n++;
  }
  return text;
}

/** A temporary directory that resolves `plumber-data` like a user's project. */
export function workspaceDir(root: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plumber-bench-server-'));
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/** `count` files under `dir/src`, each importing the previous one's base chain. */
export function manyFiles(dir: string, count: number): string[] {
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  const files: string[] = [];
  for (let f = 0; f < count; f++) {
    const file = path.join(dir, 'src', `pipeline${f}.ts`);
    const header = f === 0 ? "import { range } from 'plumber-data';\n" : `import { range } from 'plumber-data';\nimport { pipeline0 as upstream } from './pipeline${f - 1}';\n`;
    let text = header;
    for (let i = 0; i < 3; i++) text += pipelineBlock(i, f > 0 && i === 0 ? 'upstream' : undefined);
    writeFileSync(file, text);
    files.push(file);
  }
  return files;
}
