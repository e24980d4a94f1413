/**
 * A reshaped pipeline as a file the runner can load: the pipeline's file with the reorder's edit
 * applied (../fixes/reorder.ts), written as a hidden sibling (`.plumber-reshape-<name>`, in the
 * same folder so its imports resolve as the original's do) for one run and always removed after
 * it, as a conversion's is (../convert/sibling.ts). The source is read from disk, as the runner
 * reads it. Operator ids differ in the sibling where the edit moved text: overrides are said in
 * the sibling's ids for its runs, and its profile is said back in the original's.
 *
 * Before any speed is measured, the reshaped pipeline must yield the same elements as the
 * original on a seeded sample (src/runner/equivalence.ts); what cannot be checked is not offered.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { PlanChange } from '../../shared/analysis';
import type { Overrides, Profile } from '../../shared/profile';
import { checkEquivalence, type Equivalence, type SampleOptions } from '../../runner/equivalence';
import { applyEdits } from '../fixes/edits';
import { idAt, movedOffset, reorderCut, reorderEdits } from '../fixes/reorder';
import type { FileGraph } from '../graph/types';

export type ReorderChange = Extract<PlanChange, { kind: 'reorder' }>;

/** Where a file's source and graph are read. */
export interface ReshapeSource {
  graphOf(file: string): FileGraph;
  textOf(file: string): string;
}

/** The hidden sibling a reshape of `file` is written to. */
export function reshapedSiblingOf(file: string): string {
  return path.join(path.dirname(file), `.plumber-reshape-${path.basename(file)}`);
}

/** The reshaped text of a file and how its operator ids map, or why it cannot be written. */
export type Reshaped = { ok: true; text: string; ids: Map<string, string> } | { ok: false; reason: string };

async function diskSource(): Promise<ReshapeSource> {
  const { GraphWorkspace } = await import('../graph/workspace.js');
  const graphs = new GraphWorkspace();
  return { graphOf: (f) => graphs.graphOf(f), textOf: (f) => readFileSync(f, 'utf8') };
}

/** The reshape `change` makes of `file`'s text (`graph` its graph), with each moved operator's new id. */
export function reshapeText(file: string, graph: FileGraph, text: string, change: ReorderChange): Reshaped {
  const ops = graph.pipelines.flatMap((p) => p.ops);
  const ctx = { opFor: (id: string) => ops.find((o) => o.id === id && o.file === file), textOf: () => text };
  const cut = reorderCut(change, ctx);
  if ('reason' in cut) return { ok: false, reason: cut.reason };
  const edits = reorderEdits(change, ctx);
  if ('reason' in edits) return { ok: false, reason: edits.reason };
  const out = applyEdits(text, edits);
  const ids = new Map<string, string>();
  for (const o of ops) {
    if (o.file !== file) continue;
    const moved = idAt(out, movedOffset(cut, o.name.start));
    if (moved !== o.id) ids.set(o.id, moved);
  }
  return { ok: true, text: out, ids };
}

/** `overrides` keyed by the ids `ids` maps them to. */
export function rekeyed(overrides: Overrides, ids: ReadonlyMap<string, string>): Overrides {
  return Object.fromEntries(Object.entries(overrides).map(([id, o]) => [ids.get(id) ?? id, o]));
}

/** A profile of the sibling said in the original's file and ids. */
export function profileBack(p: Profile, file: string, ids: ReadonlyMap<string, string>): Profile {
  const back = new Map([...ids].map(([a, b]) => [b, a]));
  const id = (x: string): string => back.get(x) ?? x;
  return {
    ...p,
    pipeline: { ...p.pipeline, file, rootId: id(p.pipeline.rootId) },
    run: { ...p.run, overrides: Object.fromEntries(Object.entries(p.run.overrides).map(([k, o]) => [id(k), o])) },
    ops: p.ops.map((o) => ({ ...o, id: id(o.id), inputs: o.inputs.map(id), ...(o.parentId !== undefined ? { parentId: id(o.parentId) } : {}) })),
  };
}

/**
 * The reshapes of one pipeline file, each made once and checked once: verification runs a reshape
 * several times, and reading the graph and sampling both pipelines are the slow parts.
 */
export class ReshapedFiles {
  private source?: Promise<ReshapeSource>;
  private readonly made = new Map<string, Reshaped>();
  private readonly checked = new Map<string, Promise<Equivalence>>();

  readonly file: string;

  constructor(file: string, source?: ReshapeSource) {
    this.file = path.resolve(file);
    if (source) this.source = Promise.resolve(source);
  }

  /** The reshape `change` makes of the file, made on first use. */
  async outcome(change: ReorderChange): Promise<Reshaped> {
    const key = `${change.opId}>${change.before}`;
    let out = this.made.get(key);
    if (!out) {
      const from = await (this.source ??= diskSource());
      try {
        out = reshapeText(this.file, from.graphOf(this.file), from.textOf(this.file), change);
      } catch (e) {
        out = { ok: false, reason: `the source could not be read: ${e instanceof Error ? e.message : String(e)}` };
      }
      this.made.set(key, out);
    }
    return out;
  }

  /**
   * Runs `body` with the reshaped pipeline written beside the file and `overrides` in its ids, and
   * removes it after, whatever `body` does; the reason instead when the reshape cannot be written.
   */
  async run<T>(change: ReorderChange, overrides: Overrides, body: (reshaped: string, overrides: Overrides, ids: ReadonlyMap<string, string>) => Promise<T>): Promise<T | { reason: string }> {
    const out = await this.outcome(change);
    if (!out.ok) return { reason: out.reason };
    const sibling = reshapedSiblingOf(this.file);
    try {
      writeFileSync(sibling, out.text);
      return await body(sibling, rekeyed(overrides, out.ids), out.ids);
    } finally {
      rmSync(sibling, { force: true });
    }
  }

  /**
   * Whether the reshaped pipeline yields the same elements as the original on a seeded sample (the
   * same sequence: a reorder keeps order), checked once per change.
   */
  equivalence(change: ReorderChange, exportName: string | undefined, opts: SampleOptions = {}): Promise<Equivalence> {
    const key = `${change.opId}>${change.before}`;
    let out = this.checked.get(key);
    if (!out) {
      out = this.run(change, {}, (sibling) => checkEquivalence({ file: this.file, exportName }, { file: sibling, exportName }, { ordered: true, ...opts })).then((r) =>
        'equivalent' in r ? r : { equivalent: false, sameSequence: false, sameMultiset: false, elements: 0, reason: r.reason },
      );
      this.checked.set(key, out);
    }
    return out;
  }

  /** Why `change` is not offered (it cannot be written, or it changes the output on the sample), or undefined. */
  async unoffered(change: ReorderChange, exportName: string | undefined, opts: SampleOptions = {}): Promise<string | undefined> {
    const v = await this.equivalence(change, exportName, opts);
    return v.equivalent ? undefined : v.reason;
  }
}
