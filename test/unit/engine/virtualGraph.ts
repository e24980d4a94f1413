/** The graph tests' reading of source lines as a file of their own, and of a knob's written text. */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import type { FileGraph, Knob } from '../../../src/engine/graph/types';
import { FIXTURES } from '../server/helpers';

/** The graph of `lines` as a virtual file `name` next to the graph fixtures (so `plumber-data` resolves). */
export function graphOf(lines: string[], name: string): { graph: FileGraph; text: string } {
  const ws = new GraphWorkspace({
    onError: (f, e) => {
      throw new Error(`${f}: ${String(e)}`);
    },
  });
  const file = path.join(FIXTURES, 'graph', name);
  const text = lines.join('\n');
  ws.setText(file, text);
  return { graph: ws.graphOf(file), text };
}

/** The source text a knob's span covers. */
export function spanned(text: string, knob: Knob | undefined): string {
  assert.ok(knob && knob.state !== 'absent', 'the knob is written');
  return text.slice(knob.span.start, knob.span.end);
}
