/**
 * The chains of a pipeline file that the graph saw but does not follow (`FileGraph.stops`: built
 * in a loop, a device source, a stage of a library Plumber does not know), as the CLI prints them.
 * The editor shows each as an Information diagnostic; a terminal gets the same sentence at its
 * line, so `plumber plan` is never silent about what it could not read.
 */
import * as path from 'node:path';
import type { GraphSource } from '../engine/locate';

/** A stop where a terminal or a script reads it: 1-based line and column, and the graph's sentence. */
export interface StopLine {
  line: number;
  column: number;
  message: string;
}

/** A workspace that reads the disk, loading ts-morph only now (as `plumber fix` does); undefined when it cannot be loaded. */
export async function sourceGraphs(): Promise<GraphSource | undefined> {
  try {
    return new (await import('../engine/graph/workspace.js')).GraphWorkspace();
  } catch {
    return undefined;
  }
}

/** The stops of `file` (its text as `graphs` reads it, from disk by default), in source order; none when its source cannot be read. */
export function stopsOf(file: string, graphs: GraphSource | undefined): StopLine[] {
  if (!graphs) return [];
  try {
    const stops = graphs.graphOf(path.resolve(file)).stops ?? [];
    return stops.map((s) => ({ line: s.range.start.line + 1, column: s.range.start.character + 1, message: s.message })).sort((a, b) => a.line - b.line || a.column - b.column);
  } catch {
    // The stops only add to what the run showed; a source the graph cannot read has none to say.
    return [];
  }
}

/** The stops as a block of text for `plumber plan`, or '' when there are none. */
export function renderStops(file: string, stops: StopLine[]): string {
  if (stops.length === 0) return '';
  const name = path.basename(file);
  return `\nNot followed in the source (the editor shows no numbers for these):\n${stops.map((s) => `  • ${name}:${s.line}:${s.column}: ${s.message}`).join('\n')}\n`;
}
