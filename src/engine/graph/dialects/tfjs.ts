/**
 * tfjs-data chains: `tf.data.generator(fn)`, `tf.data.array(xs)`, `tf.data.csv(url)`,
 * `tf.data.func(fn)`, `tf.data.zip(…)` and the Dataset methods that are operators, however `tf` is
 * imported. Its own library can change one thing: a `.prefetch(n)` after a stage (tfjs-data has no
 * parallel map: `map` runs on the main thread, `mapAsync` awaits one call at a time).
 */
import { CallExpression, Node } from 'ts-morph';
import { tfjsDataMember } from './bindings';
import { nestedIn } from './nested';
import { argLabel, positional, type DialectRaw, type StageDetail } from './common';
import type { DialectWalker, Recogniser } from './walker';
import type { Lever, OpKind } from '../types';

const LEVERS: Lever[] = ['prefetch'];

/** tfjs-data's source functions and the kind each is in the shared vocabulary. */
const SOURCES: Record<string, OpKind> = { generator: 'from', array: 'from', func: 'from', csv: 'csv', zip: 'zip' };

/** Methods that are operators: the kind, the fn argument, and positional knobs. */
const METHODS: Record<string, { kind: OpKind; fn?: boolean; async?: boolean; knobs?: Array<[number, string]>; random?: boolean }> = {
  map: { kind: 'map', fn: true },
  mapAsync: { kind: 'map', fn: true, async: true },
  filter: { kind: 'filter', fn: true },
  batch: { kind: 'batch', knobs: [[0, 'batchSize']] },
  shuffle: {
    kind: 'shuffle',
    knobs: [
      [0, 'bufferSize'],
      [1, 'seed'],
    ],
    random: true,
  },
  prefetch: { kind: 'prefetch', knobs: [[0, 'bufferSize']] },
  repeat: { kind: 'repeat', knobs: [[0, 'count']] },
  take: { kind: 'take', knobs: [[0, 'count']] },
  skip: { kind: 'skip', knobs: [[0, 'count']] },
  concatenate: { kind: 'concatenate' },
};

/** Methods that consume a Dataset (training and iteration): they end a chain. */
const CONSUMERS = new Set(['iterator', 'forEachAsync', 'toArray', 'toArrayForTest', 'size', 'then']);

/** Devices Plumber cannot run in a child process. */
const DEVICES = new Set(['webcam', 'microphone']);

function label(name: string, call: CallExpression): string {
  return `${name}(${argLabel(call.getArguments()[0])})`;
}

/** The datasets `tf.data.zip` pulls from: an array or object literal of datasets, in order. */
function zipInputs(call: CallExpression, w: DialectWalker): DialectRaw[] {
  const arg = call.getArguments()[0];
  if (!arg) return [];
  let elements: Node[] = [arg];
  if (Node.isArrayLiteralExpression(arg)) elements = arg.getElements();
  else if (Node.isObjectLiteralExpression(arg)) elements = arg.getProperties().map((p) => (Node.isPropertyAssignment(p) ? (p.getInitializer() ?? p) : Node.isShorthandPropertyAssignment(p) ? p.getNameNode() : p));
  return elements.map((e) => w.resolve(e)).filter((x): x is DialectRaw => x !== undefined);
}

function source(call: CallExpression, w: DialectWalker): DialectRaw | undefined {
  const callee = call.getExpression();
  if (!Node.isIdentifier(callee) && !Node.isPropertyAccessExpression(callee)) return undefined;
  const member = tfjsDataMember(callee);
  if (!member) return undefined;
  const idNode = Node.isPropertyAccessExpression(callee) ? callee.getNameNode() : callee;
  if (DEVICES.has(member)) {
    w.stops.add(idNode, `tf.data.${member}() reads a device, which Plumber cannot open in its profiling process: this chain is not profiled.`);
    return undefined;
  }
  const kind = SOURCES[member];
  if (!kind) return undefined;
  const args = call.getArguments();
  const detail: StageDetail = { label: label(member, call), knobs: {}, levers: LEVERS };
  if (member === 'generator' || member === 'func') detail.fnArg = args[0];
  if (member === 'csv') detail.knobs = positional(call, [[0, 'path']]);
  const first = args[0];
  if (member === 'array' && first && Node.isArrayLiteralExpression(first) && !first.getElements().some((e) => Node.isSpreadElement(e))) detail.cardinality = first.getElements().length;
  const inputs = member === 'zip' ? zipInputs(call, w) : [];
  const stage: DialectRaw = { dialect: 'tfjs-data', kind, idNode, node: call, method: false, inputs, partial: false, detail };
  // An async generator handed to generator() may iterate generator stages of its own: nested in the source.
  const nested = member === 'generator' ? nestedIn(args[0], w) : [];
  if (nested.length > 0) stage.nested = nested;
  return stage;
}

function method(call: CallExpression, name: string, up: DialectRaw | undefined, w: DialectWalker): DialectRaw | undefined {
  const m = METHODS[name];
  const callee = call.getExpression();
  if (!m || !Node.isPropertyAccessExpression(callee)) return undefined;
  const detail: StageDetail = { label: label(name, call), knobs: positional(call, m.knobs ?? []), levers: LEVERS };
  if (m.fn) detail.fnArg = call.getArguments()[0];
  if (m.async) detail.fnAsync = true;
  if (m.random) detail.random = true;
  const side = name === 'concatenate' ? [w.resolve(call.getArguments()[0])].filter((x): x is DialectRaw => x !== undefined) : [];
  return { dialect: 'tfjs-data', kind: m.kind, idNode: callee.getNameNode(), node: call, method: true, inputs: up ? [up, ...side] : side, partial: up === undefined, detail };
}

/** True when the checker types `node` as tfjs-data's `Dataset` (a parameter `ds: tf.data.Dataset<…>`). */
function typed(node: Node): boolean {
  try {
    const type = node.getType();
    const symbol = type.getSymbol() ?? type.getAliasSymbol();
    if (!symbol || !/Dataset$/.test(symbol.getName())) return false;
    const decl = symbol.getDeclarations()[0];
    return decl ? decl.getSourceFile().getFilePath().includes('/@tensorflow/tfjs-data/') : false;
  } catch {
    return false;
  }
}

export const tfjs: Recogniser = {
  dialect: 'tfjs-data',
  stage: (node, w) => (Node.isCallExpression(node) ? source(node, w) : undefined),
  method,
  consumers: CONSUMERS,
  typed,
};
