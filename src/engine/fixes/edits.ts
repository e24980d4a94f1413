/**
 * The edit engine: turns plan changes into text edits on the operators' call sites. Literals are
 * replaced in place, absent options are added next to what is written (same line or, in a multi-line
 * object, on a new line with the same indentation), and new operators go on their own line when the
 * chain is written one operator per line. Anything written as an expression is left alone, with a
 * reason. Comments are never inside a replaced range.
 */
import * as path from 'node:path';
import { can, leverOf } from '../../model';
import type { PlanChange } from '../../shared/analysis';
import { optionName } from '../../shared/dialects';
import type { FileGraph, FnInfo, GraphOp, PipelineGraph } from '../graph/types';
import { flowEdit } from './flow-edits';
import { reorderEdits } from './reorder';

/** One text replacement in one file, by offsets into the text the graph was extracted from. */
export interface PlannedEdit {
  file: string;
  start: number;
  end: number;
  newText: string;
  /** Orders insertions at the same offset: lower first (`.cache()` before `.prefetch(n)`). */
  order?: number;
}

export type FixOutcome = { ok: true; edits: PlannedEdit[] } | { ok: false; reason: string };

/** What the engine needs besides the plan. */
export interface FixContext {
  pipeline: PipelineGraph;
  /** The graph of the operator's file (for its module kind). */
  graphOf(file: string): FileGraph;
  /** The current text of a file. */
  textOf(file: string): string;
  /** The graph operator a plan refers to (by profile id). */
  opFor(id: string): GraphOp | undefined;
  /**
   * The module the run found exporting an operator's fn (the profile's `fnModule`, by profile id):
   * what a worker imports when the source alone does not show the export (CommonJS a bundler
   * wrote, `module.exports = __toCommonJS(…)`), as the plan's own verification runs did.
   */
  runtimeModuleOf?(id: string): { file: string; exportName: string } | undefined;
}

/**
 * Option properties one fix wants on one operator, in the order they should be written, by
 * plumber-data's knob name (`GraphOp.knobs` is keyed so); `writtenName` spells it as the operator's
 * library does.
 */
type OptionPatch = Array<[key: string, valueText: string, overwrite: boolean]>;

/**
 * How `op`'s options spell plumber-data's knob `key` (a Node stream's `concurrency` for
 * `parallelism`). `optionNames` is keyed by the plan's knob, which for a buffer is `prefetch`
 * while the knob it sets is `bufferSize` (a Node stream's `highWaterMark`).
 */
function writtenName(op: GraphOp, key: string): string {
  const knob = key === 'bufferSize' ? 'prefetch' : key;
  const spelt = op.optionNames?.[knob] ?? (knob === 'parallelism' || knob === 'prefetch' ? optionName(op.dialect, knob) : knob);
  return spelt === knob ? key : spelt;
}

/** The operator sets its buffer with an option of its own (a Node stream's highWaterMark), not with a `.prefetch(n)` after it. */
function buffersByOption(op: GraphOp): boolean {
  return op.optionNames?.['prefetch'] !== undefined || optionName(op.dialect, 'prefetch') !== 'prefetch';
}

function lineEndAfter(text: string, pos: number): number | undefined {
  const nl = text.indexOf('\n', pos);
  const end = nl < 0 ? text.length : nl;
  const rest = text.slice(pos, end).replace(/\r$/, '');
  // Only whitespace and comments may follow, else the operator does not end its line.
  return /^\s*(\/\/.*|\/\*.*?\*\/\s*)?$/.test(rest) ? pos + rest.length : undefined;
}

function optionEdits(op: GraphOp, patch: OptionPatch, text: string): FixOutcome {
  const edits: PlannedEdit[] = [];
  const missing: Array<[string, string]> = [];
  for (const [key, value, overwrite] of patch) {
    const knob = op.knobs[key] ?? { state: 'absent' as const };
    if (knob.state === 'literal') {
      if (overwrite && knob.text !== value) edits.push({ file: op.file, start: knob.span.start, end: knob.span.end, newText: value });
    } else if (knob.state === 'expression') {
      if (!overwrite) continue;
      return { ok: false, reason: `${writtenName(op, key)} of ${op.label} is the expression \`${knob.text}\`; Plumber does not overwrite code it cannot read. Set it to ${value} there.` };
    } else {
      missing.push([key, value]);
    }
  }
  if (missing.length === 0) return { ok: true, edits };
  // plumber-data rejects an option the operator does not know: never write one.
  const unknown = op.optionKeys ? missing.filter(([k]) => !op.optionKeys!.includes(writtenName(op, k)) && !op.optionKeys!.includes(k)).map(([k]) => writtenName(op, k)) : [];
  if (unknown.length > 0) return { ok: false, reason: `${op.label} takes no ${unknown.join(' or ')} option, so Plumber cannot set it there.` };
  const site = op.options;
  const props = missing.map(([k, v]) => `${writtenName(op, k)}: ${v}`);
  if (!site || site.state === 'expression') {
    const written = site?.state === 'expression' && site.text ? ` are the expression \`${site.text}\`` : ' cannot be written here';
    return { ok: false, reason: `The options of ${op.label}${written}; Plumber does not rewrite them. Add ${props.join(', ')} there.` };
  }
  if (site.state === 'absent') {
    edits.push({ file: op.file, start: site.insertAt, end: site.insertAt, newText: `${site.needsComma ? ', ' : ''}{ ${props.join(', ')} }` });
    return { ok: true, edits };
  }
  if (site.lastPropertyEnd === undefined) {
    edits.push({ file: op.file, start: site.span.start + 1, end: site.closeBrace, newText: ` ${props.join(', ')} ` });
    return { ok: true, edits };
  }
  if (!site.multiline) {
    edits.push({ file: op.file, start: site.lastPropertyEnd, end: site.lastPropertyEnd, newText: `, ${props.join(', ')}` });
    return { ok: true, edits };
  }
  // Multi-line object: one property per line, keeping whatever comment ends the last line.
  let after = site.lastPropertyEnd;
  if (site.trailingComma) after = text.indexOf(',', after) + 1;
  else edits.push({ file: op.file, start: site.lastPropertyEnd, end: site.lastPropertyEnd, newText: ',' });
  const lineEnd = lineEndAfter(text, after);
  const lines = props.map((p, i) => `\n${site.indent}${p}${i < props.length - 1 || site.trailingComma ? ',' : ''}`).join('');
  if (lineEnd === undefined) {
    edits.push({ file: op.file, start: after, end: after, newText: ` ${props.join(', ')}${site.trailingComma ? ',' : ''}` });
  } else {
    edits.push({ file: op.file, start: lineEnd, end: lineEnd, newText: lines, order: 1 });
  }
  return { ok: true, edits };
}

/** Insert `.call` right after `op`, on its own line when the chain is written one operator per line. */
function insertAfter(op: GraphOp, call: string, pipeline: PipelineGraph, text: string, order: number): PlannedEdit {
  const next = pipeline.ops.find((o) => o.inputs[0] === op.id && o.file === op.file && o.call.start === op.call.start);
  if (next && next.lineIndent !== undefined && next.name.range.start.line > op.call.range.end.line) {
    const lineEnd = lineEndAfter(text, op.call.end);
    const at = lineEnd ?? op.call.end;
    return { file: op.file, start: at, end: at, newText: `\n${next.lineIndent}${call}`, order };
  }
  if (!next && op.lineIndent !== undefined) {
    return { file: op.file, start: op.call.end, end: op.call.end, newText: `\n${op.lineIndent}${call}`, order };
  }
  return { file: op.file, start: op.call.end, end: op.call.end, newText: call, order };
}

/** A string literal in single quotes, as the fixes write `'worker'` (and as most TypeScript is written). */
export function quoted(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The source shows `fn` exported by its module (or it can be: `export ` goes before its declaration). */
export function exportedInSource(fn: FnInfo | undefined): boolean {
  return fn?.file !== undefined && (fn.exportName !== undefined || (fn.sameFile === true && fn.exportInsertAt !== undefined));
}

/**
 * The expression naming the module that exports `op`'s fn, as the op's file can write it at run
 * time. `runtime`: where the run found the fn exported, used when the source does not show it.
 */
export function moduleExpression(op: GraphOp, moduleKind: 'esm' | 'cjs', runtime?: { file: string }): string | { reason: string } {
  const fn = op.fn;
  if (!fn || fn.form === 'inline') {
    return { reason: `The function of ${op.label} is written inline; move it into a module as a named export so worker threads can import it.` };
  }
  const exported = exportedInSource(fn);
  if (!exported && !runtime) {
    const name = fn.name ?? 'its function';
    return { reason: `${name} is not a named export of its module; export it so worker threads can import it.` };
  }
  const file = exported ? fn.file! : runtime!.file;
  if (file === op.file) return moduleKind === 'esm' ? 'import.meta.url' : '__filename';
  // The specifier the source imports it with names this module only where the graph resolved it there.
  const spec = fn.file === file ? fn.importSpecifier : undefined;
  if (spec && !spec.startsWith('.') && !path.isAbsolute(spec)) {
    return moduleKind === 'esm' ? `import.meta.resolve(${quoted(spec)})` : `require.resolve(${quoted(spec)})`;
  }
  let rel = path.relative(path.dirname(op.file), file).split(path.sep).join('/');
  if (!rel.startsWith('.')) rel = `./${rel}`;
  if (moduleKind === 'esm') return `new URL(${quoted(rel)}, import.meta.url).href`;
  return `require.resolve(${quoted(spec && spec.startsWith('.') ? spec : rel)})`;
}

function singleChange(change: PlanChange, ctx: FixContext, patches: Map<GraphOp, OptionPatch>, inserts: PlannedEdit[]): string | undefined {
  const op = ctx.opFor(change.opId);
  if (!op) return `The operator ${change.opId} is no longer in the source; profile again.`;
  // A dialect's operator takes only its own library's knobs (`GraphOp.levers`); the rest is a conversion.
  const lever = leverOf(change);
  if (lever !== undefined && !can(op, lever)) return `${op.dialect ?? 'Its library'} has no ${lever} knob for ${op.label}; only converting the pipeline to plumber-data makes this change.`;
  const text = ctx.textOf(op.file);
  const patchOf = (o: GraphOp): OptionPatch => {
    let p = patches.get(o);
    if (!p) patches.set(o, (p = []));
    return p;
  };
  switch (change.kind) {
    case 'parallelism':
      if (!op.options) return `${op.label} has no ${writtenName(op, 'parallelism')} to set.`;
      patchOf(op).push(['parallelism', String(change.to), true]);
      return undefined;
    case 'cycleLength':
      // An interleave's inputs open at once: an option of the interleave call, like its parallelism.
      if (op.kind !== 'interleave' || !op.options) return `${op.label} has no cycleLength to set.`;
      patchOf(op).push(['cycleLength', String(change.to), true]);
      return undefined;
    case 'placement': {
      if (change.to === 'main') {
        // The pool's module and export name stay: harmless on the main thread, and the way back.
        if (!op.options) return `${op.label} has no options to set.`;
        patchOf(op).push(['placement', `'main'`, true], ['parallelism', '1', true]);
        return undefined;
      }
      const fn = op.fn;
      const runtime = exportedInSource(fn) ? undefined : ctx.runtimeModuleOf?.(change.opId);
      const moduleExpr = moduleExpression(op, ctx.graphOf(op.file).moduleKind, runtime);
      if (typeof moduleExpr !== 'string') return moduleExpr.reason;
      const p = patchOf(op);
      p.push(['parallelism', String(change.parallelism), true], ['placement', `'worker'`, true], ['module', moduleExpr, false]);
      if (runtime) {
        // The worker looks the fn up by its runtime name unless told the export's: name it unless
        // the declaration the graph found has that very name.
        if (fn?.declaredName !== runtime.exportName) p.push(['exportName', quoted(runtime.exportName), false]);
        return undefined;
      }
      if (fn && !fn.exportName && fn.exportInsertAt !== undefined && fn.file) {
        // The worker imports the function by name: export it where it is declared.
        inserts.push({ file: fn.file, start: fn.exportInsertAt, end: fn.exportInsertAt, newText: 'export ' });
      }
      if (fn?.exportName && fn.declaredName && fn.exportName !== fn.declaredName) p.push(['exportName', quoted(fn.exportName), false]);
      return undefined;
    }
    case 'prefetch':
      // A buffer its library sets as an option of the operator (a Node stream's highWaterMark).
      if (buffersByOption(op)) {
        if (!op.options) return `${op.label} has no ${writtenName(op, 'prefetch')} to set.`;
        patchOf(op).push(['bufferSize', String(change.size), true]);
        return undefined;
      }
      if (change.existing || op.kind === 'prefetch') {
        const knob = op.knobs['bufferSize'];
        if (knob?.state === 'literal') {
          if (knob.text !== String(change.size)) inserts.push({ file: op.file, start: knob.span.start, end: knob.span.end, newText: String(change.size) });
          return undefined;
        }
        if (knob?.state === 'expression') return `The size of ${op.label} is the expression \`${knob.text}\`; set it to ${change.size} there.`;
        inserts.push({ file: op.file, start: op.call.end - 1, end: op.call.end - 1, newText: String(change.size) });
        return undefined;
      }
      inserts.push(insertAfter(op, `.prefetch(${change.size})`, ctx.pipeline, text, 2));
      return undefined;
    case 'cache':
      inserts.push(insertAfter(op, change.path === undefined ? '.cache()' : `.cache(${quotedCachePath(change.path)})`, ctx.pipeline, text, 1));
      return undefined;
    case 'convert':
      return `Converting ${op.label} to plumber-data is not an edit of its knobs.`;
    case 'reorder': {
      const moved = reorderEdits(change, ctx);
      if ('reason' in moved) return moved.reason;
      inserts.push(...moved);
      return undefined;
    }
    case 'fuse':
    case 'deterministic':
      return flowEdit(change, op, patchOf(op));
  }
}

/** Merge insertions at one offset into one edit and refuse overlapping replacements. */
function normalise(edits: PlannedEdit[]): FixOutcome {
  const sorted = [...edits].sort((a, b) => a.file.localeCompare(b.file) || a.start - b.start || (a.order ?? 0) - (b.order ?? 0));
  const out: PlannedEdit[] = [];
  for (const e of sorted) {
    const prev = out[out.length - 1];
    if (prev && prev.file === e.file && prev.start === e.start && prev.end === e.start && e.end === e.start) {
      prev.newText += e.newText;
      continue;
    }
    if (prev && prev.file === e.file && e.start < prev.end) {
      return { ok: false, reason: 'Two of the fixes edit the same code; apply them one at a time.' };
    }
    out.push({ ...e });
  }
  return { ok: true, edits: out };
}

/** The edits for several plan changes at once (one change is the single quick fix). */
export function editsForChanges(changes: PlanChange[], ctx: FixContext): FixOutcome {
  const patches = new Map<GraphOp, OptionPatch>();
  const inserts: PlannedEdit[] = [];
  for (const change of changes) {
    const reason = singleChange(change, ctx, patches, inserts);
    if (reason) return { ok: false, reason };
  }
  const edits = [...inserts];
  for (const [op, patch] of patches) {
    // A later change to the same knob wins (placement's parallelism over an earlier parallelism change).
    const merged = new Map<string, [string, string, boolean]>();
    for (const entry of patch) {
      const prev = merged.get(entry[0]);
      merged.set(entry[0], prev && !entry[2] ? prev : entry);
    }
    const outcome = optionEdits(op, [...merged.values()], ctx.textOf(op.file));
    if (!outcome.ok) return outcome;
    edits.push(...outcome.edits);
  }
  return normalise(edits);
}

/** Apply edits (offsets into `text`) to one file's text. */
export function applyEdits(text: string, edits: PlannedEdit[]): string {
  let out = text;
  for (const e of [...edits].sort((a, b) => b.start - a.start || (b.order ?? 0) - (a.order ?? 0))) {
    out = out.slice(0, e.start) + e.newText + out.slice(e.end);
  }
  return out;
}

/**
 * A disk cache's path as a string literal, as the plan has it: relative to the pipeline file's
 * directory, where Plumber's runner runs the pipeline (cache(path) resolves a relative path from
 * the working directory). Single quotes, as the project's style has them.
 */
function quotedCachePath(planned: string): string {
  return `'${planned.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
