/**
 * The converted pipeline as a file the runner can load: a hidden sibling of the pipeline's file
 * (`.plumber-convert-<name>`, in the same folder so its relative imports and `module:` paths
 * resolve as the original's do), written for one run and always removed after it, whether the run
 * measured, failed or was cancelled. The source is read from disk, as the runner reads it.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseOpId } from '../../shared/opId';
import type { FileGraph } from '../graph/types';
import { convertInGraph } from './index';
import type { ConvertChange, ConvertOutcome } from './types';

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
 * The conversions of one pipeline file, each made once (reading the source and its graph is the
 * slow part, and verification runs a conversion several times), run through `run`.
 */
export class ConvertedFiles {
  private source?: Promise<ConvertSource>;
  private readonly made = new Map<string, ConvertOutcome>();

  constructor(
    readonly file: string,
    source?: ConvertSource,
  ) {
    if (source) this.source = Promise.resolve(source);
  }

  /** The conversion `change` makes of the file, made on first use. */
  async outcome(change: ConvertChange): Promise<ConvertOutcome> {
    const key = JSON.stringify(change);
    let out = this.made.get(key);
    if (!out) out = this.elsewhere(change);
    if (!out) {
      const from = await (this.source ??= diskSource());
      out = convertInGraph(from.graphOf(this.file), from.textOf(this.file), change);
      this.made.set(key, out);
    }
    return out;
  }

  /**
   * Why a chain written in another module than the one that runs (a training script's pipeline)
   * is not converted for the run: the running module would still import the original.
   */
  private elsewhere(change: ConvertChange): ConvertOutcome | undefined {
    const rel = parseOpId(change.opId)?.rel;
    if (rel === undefined) return undefined;
    return { ok: false, reason: `The chain is written in ${rel}, which ${path.basename(this.file)} imports; a conversion is run only from the pipeline's own module.` };
  }

  /**
   * Runs `body` with the converted pipeline written beside the file, and removes it after,
   * whatever `body` does; the reason instead when the chain is not converted.
   */
  async run<T>(change: ConvertChange, body: (converted: string) => Promise<T>): Promise<T | { reason: string }> {
    const out = await this.outcome(change);
    if (!out.ok) return { reason: out.reason };
    const sibling = siblingOf(this.file);
    try {
      writeFileSync(sibling, out.text);
      return await body(sibling);
    } finally {
      rmSync(sibling, { force: true });
    }
  }
}
