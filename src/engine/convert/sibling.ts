/**
 * The converted pipeline as a file the runner can load: a hidden sibling of the pipeline's file
 * (`.plumber-convert-<name>`, in the same folder so its relative imports and `module:` paths
 * resolve as the original's do), written for one run and always removed after it, whether the run
 * measured, failed or was cancelled. The source is read from disk, as the runner reads it.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { FileGraph } from '../graph/types';
import { convertInGraph } from './index';
import type { ConvertChange } from './types';

/** Where a file's source and graph are read. */
export interface ConvertSource {
  graphOf(file: string): FileGraph;
  textOf(file: string): string;
}

/** The hidden sibling a conversion of `file` is written to. */
export function siblingOf(file: string): string {
  return path.join(path.dirname(file), `.plumber-convert-${path.basename(file)}`);
}

/** The disk as the runner sees it (ts-morph is loaded only when a conversion is run). */
async function diskSource(): Promise<ConvertSource> {
  const { GraphWorkspace } = await import('../graph/workspace.js');
  const graphs = new GraphWorkspace();
  return { graphOf: (f) => graphs.graphOf(f), textOf: (f) => readFileSync(f, 'utf8') };
}

/**
 * Runs `body` with the converted pipeline written beside `file`, and removes it after; the reason
 * instead when the chain is not converted.
 */
export async function withConvertedSibling<T>(file: string, change: ConvertChange, body: (converted: string) => Promise<T>, source?: ConvertSource): Promise<T | { reason: string }> {
  const from = source ?? (await diskSource());
  const out = convertInGraph(from.graphOf(file), from.textOf(file), change);
  if (!out.ok) return { reason: out.reason };
  const sibling = siblingOf(file);
  try {
    writeFileSync(sibling, out.text);
    return await body(sibling);
  } finally {
    rmSync(sibling, { force: true });
  }
}
