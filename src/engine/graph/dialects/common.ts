/**
 * What every dialect's extractor produces before ids are given: a stage with the node its id is
 * read at, its inputs, and what its call says (knobs under plumber-data's names, the options site,
 * the fn, the levers its own library has). One materialiser turns a chain of them into the same
 * `GraphOp`s plumber-data's chains give, so the surfaces and the model need not know the dialect.
 */
import { CallExpression, NewExpression, Node } from 'ts-morph';
import { readFunction } from '../functions';
import { chainLineIndent, lineColumn, nodeSpan, readKnob, readOptions, shortArg, spanOf } from '../operators';
import type { Dialect, GraphOp, GraphStop, Knob, Lever, OpKind, OptionsSite, Span } from '../types';
import { opIdOfSite, type ArgSites } from '../../../shared/opId';

/** What a stage's call says, read when the stage is recognised. */
export interface StageDetail {
  label: string;
  knobs: Record<string, Knob>;
  options?: OptionsSite;
  /** The option names the call accepts, as the dialect spells them. */
  optionKeys?: string[];
  /** The user function it calls (read with `readFunction`). */
  fnArg?: Node;
  /** The fn is async whatever its declaration says (tfjs `mapAsync` awaits what it returns). */
  fnAsync?: boolean;
  levers: Lever[];
  optionNames?: Partial<Record<string, string>>;
  random?: boolean;
  cardinality?: number;
}

/** A stage found while walking a chain, before ids are assigned. */
export interface DialectRaw {
  dialect: Dialect;
  kind: OpKind;
  /** The node whose start is the op id: the method name, the callee's last identifier, or a pipeline argument. */
  idNode: Node;
  /** The whole expression of the stage. */
  node: Node;
  /** True for `.name(` calls: a prefetch can be inserted after them on their own line. */
  method: boolean;
  inputs: DialectRaw[];
  /** An upstream could not be followed (a parameter, an untyped value). */
  partial: boolean;
  detail: StageDetail;
  /** Stages built inside this stage's fn (a generator stage that composes others). */
  nested?: DialectRaw[];
  /** A `pipeline(…)`/`compose(…)` call this stage ends: its callee name and its arguments' stages. */
  argSites?: { callee: Node; args: Array<DialectRaw | null> };
}

/** An argument as a label shows it: names, literals and short calls as written (`ids()`), anything else `…`. */
export function argLabel(node: Node | undefined): string {
  if (!node) return '';
  const text = node.getText().replace(/\s+/g, ' ');
  if (Node.isCallExpression(node) || Node.isNewExpression(node)) return text.length <= 24 ? text : '…';
  return shortArg(node);
}

/** Where the chain cannot be followed, said once per place. */
export class Stops {
  readonly list: GraphStop[] = [];
  private readonly seen = new Set<string>();

  add(node: Node, message: string): void {
    const key = `${node.getStart()}:${message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.list.push({ range: nodeSpan(node).range, message });
  }
}

/**
 * The options object at argument `index`, read under the dialect's property names and stored under
 * plumber-data's knob names (`concurrency` → `parallelism`, `highWaterMark` → `bufferSize`).
 */
export function mappedOptions(call: CallExpression | NewExpression, index: number, names: Record<string, string>, knobs: Record<string, Knob>): OptionsSite {
  const read: Record<string, Knob> = {};
  const site = readOptions(call, index, Object.keys(names), read);
  for (const [property, knob] of Object.entries(names)) knobs[knob] = read[property] ?? { state: 'absent' };
  return site;
}

/** Positional knobs: `knobs[key] = args[index]` as written. */
export function positional(call: CallExpression | NewExpression, keys: Array<[number, string]>): Record<string, Knob> {
  const args = call.getArguments();
  const knobs: Record<string, Knob> = {};
  for (const [i, key] of keys) knobs[key] = readKnob(args[i]);
  return knobs;
}

export interface MaterialisedChain {
  ops: GraphOp[];
  rootId: string;
  partial: boolean;
  argSites: ArgSites[];
}

/** The graph operators of a dialect chain ending at `root`, sources first, nested stages before the stage they run in. */
export function materialiseDialect(root: DialectRaw, pipelineFile: string): MaterialisedChain {
  const ops: GraphOp[] = [];
  const ids = new Map<DialectRaw, string>();
  const argSites: ArgSites[] = [];
  let partial = false;
  const idOf = (raw: DialectRaw): string => {
    const sf = raw.idNode.getSourceFile();
    return opIdOfSite({ file: sf.getFilePath(), ...lineColumn(sf, raw.idNode.getStart()) }, pipelineFile);
  };
  const visit = (raw: DialectRaw, guard: Set<DialectRaw>, parent?: string): void => {
    if (ids.has(raw) || guard.has(raw)) return;
    guard.add(raw);
    for (const input of raw.inputs) visit(input, guard, parent);
    const id = idOf(raw);
    for (const inner of raw.nested ?? []) visit(inner, guard, id);
    if (parent === undefined) partial ||= raw.partial;
    ids.set(raw, id);
    ops.push(
      graphOp(
        raw,
        id,
        ops.length,
        raw.inputs.map((i) => ids.get(i)).filter((x): x is string => x !== undefined),
        parent,
      ),
    );
    if (raw.argSites) {
      const callee = raw.argSites.callee;
      const sf = callee.getSourceFile();
      argSites.push({ site: { file: sf.getFilePath(), ...lineColumn(sf, callee.getStart()) }, args: raw.argSites.args.map((a) => (a ? (ids.get(a) ?? idOf(a)) : null)) });
    }
  };
  visit(root, new Set());
  return { ops, rootId: ids.get(root)!, partial, argSites };
}

function graphOp(raw: DialectRaw, id: string, index: number, inputs: string[], parent: string | undefined): GraphOp {
  const sf = raw.node.getSourceFile();
  const file = sf.getFilePath();
  const d = raw.detail;
  const reading = d.fnArg ? readFunction(d.fnArg, file, undefined) : undefined;
  const nameStart = raw.idNode.getStart();
  const op: GraphOp = {
    id,
    kind: raw.kind,
    file,
    name: nameSpan(raw.idNode),
    call: nodeSpan(raw.node),
    own: spanOf(sf, nameStart, raw.node.getEnd()),
    label: d.label,
    knobs: d.knobs,
    inputs,
    index,
    dialect: raw.dialect,
    levers: [...d.levers],
  };
  if (raw.method) {
    const dot = sf.getFullText().lastIndexOf('.', nameStart);
    const indent = dot >= 0 ? chainLineIndent(sf, dot) : undefined;
    if (indent !== undefined) op.lineIndent = indent;
  }
  if (parent !== undefined) op.parent = parent;
  if (d.options) op.options = d.options;
  if (d.optionKeys) op.optionKeys = [...d.optionKeys];
  if (d.optionNames) op.optionNames = { ...d.optionNames };
  if (d.cardinality !== undefined) op.cardinality = d.cardinality;
  if (reading) {
    op.fn = d.fnAsync ? { ...reading.fn, async: true } : reading.fn;
    if (reading.random) op.random = reading.random;
  }
  if (d.random) op.random = { reason: 'shuffle', detail: `${d.label} reorders elements randomly`, span: op.name };
  return op;
}

/** What a lens and a diagnostic mark: the name itself, `new Upper` of a construction, or an argument's first word. */
function nameSpan(idNode: Node): Span {
  const sf = idNode.getSourceFile();
  const start = idNode.getStart();
  if (Node.isIdentifier(idNode)) return nodeSpan(idNode);
  if (Node.isNewExpression(idNode)) return spanOf(sf, start, idNode.getExpression().getEnd());
  return spanOf(sf, start, start + firstWordLength(idNode.getText()));
}

/** Length of the leading identifier of a text (the name span of an argument expression such as `zlib.createGunzip()`). */
function firstWordLength(text: string): number {
  const m = /^[A-Za-z_$][\w$]*/.exec(text);
  return m ? m[0].length : Math.min(text.length, 1);
}
