/** Shared helpers of the server tests: fixture paths, graph summaries for expected JSON, workspaces. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as assert from 'node:assert/strict';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import type { FileGraph } from '../../../src/engine/graph/types';

export const FIXTURES = path.resolve(__dirname, '../../fixtures/server');

/** Set UPDATE_FIXTURES=1 to rewrite expected files after an intended change. */
export const UPDATE = process.env['UPDATE_FIXTURES'] === '1';

/** A workspace with `file` opened from disk. */
export function open(
  file: string,
  ws = new GraphWorkspace({
    onError: (f, e) => {
      throw new Error(`${f}: ${String(e)}`);
    },
  }),
): { ws: GraphWorkspace; graph: FileGraph } {
  ws.setText(file, readFileSync(file, 'utf8'));
  return { ws, graph: ws.graphOf(file) };
}

function jsonValue(v: number | string | boolean): number | string | boolean {
  return typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;
}

/** The graph as stable, readable JSON (paths relative to the fixture, no offsets). */
export function summarise(graph: FileGraph, root: string): unknown {
  const rel = (f: string): string => path.relative(root, f).split(path.sep).join('/');
  return {
    moduleKind: graph.moduleKind,
    pipelines: graph.pipelines.map((p) => ({
      name: p.name,
      exported: p.exported,
      factory: p.factory,
      head: `${p.head.range.start.line + 1}:${p.head.range.start.character + 1}`,
      rootId: p.rootId,
      partial: p.partial,
      ops: p.ops.map((o) => {
        const knobs: Record<string, unknown> = {};
        for (const [k, knob] of Object.entries(o.knobs)) {
          if (knob.state === 'literal') knobs[k] = jsonValue(knob.value);
          else if (knob.state === 'expression') knobs[k] = `expr:${knob.text}`;
        }
        return {
          id: o.id,
          kind: o.kind,
          label: o.label,
          file: rel(o.file),
          inputs: o.inputs,
          knobs,
          ...(o.options ? { options: o.options.state } : {}),
          ...(o.fn
            ? {
                fn: {
                  name: o.fn.name,
                  form: o.fn.form,
                  async: o.fn.async,
                  exportName: o.fn.exportName,
                  declaredName: o.fn.declaredName,
                  file: o.fn.file ? rel(o.fn.file) : undefined,
                  importSpecifier: o.fn.importSpecifier,
                },
              }
            : {}),
          ...(o.random ? { random: o.random.reason } : {}),
          ...(o.lineIndent !== undefined ? { lineIndent: o.lineIndent } : {}),
        };
      }),
    })),
  };
}

/** Compare `actual` with the JSON in `expectedFile`, or write it when updating fixtures. */
export function matchesFixture(actual: unknown, expectedFile: string): void {
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (UPDATE || !existsSync(expectedFile)) {
    if (!UPDATE) throw new Error(`${expectedFile} is missing: run the tests with UPDATE_FIXTURES=1 to create it, then review it.`);
    writeFileSync(expectedFile, text);
    return;
  }
  assert.deepEqual(JSON.parse(text), JSON.parse(readFileSync(expectedFile, 'utf8')));
}
