/**
 * Node stream chains: `Readable.from(src)`, `fs.createReadStream(path, { highWaterMark })`, the
 * operator methods `.map/.filter/.flatMap(fn, { concurrency, highWaterMark })`, `.take`, `.drop`,
 * `.pipe(stage)`, and `pipeline(…)`/`compose(…)` (from `stream` or `stream/promises`) over read
 * streams, `zlib.create*()`, `Transform` objects and async generator functions. Knobs are stored
 * under plumber-data's names (`parallelism`, `bufferSize`); `optionNames` says how Node spells them.
 */
import { CallExpression, NewExpression, Node } from 'ts-morph';
import { nodeMember } from './bindings';
import { argLabel, mappedOptions, positional, type DialectRaw, type StageDetail } from './common';
import { asyncGeneratorOf, consumedParameter, nestedStages } from './generators';
import { nestedIn } from './nested';
import type { DialectWalker, Recogniser } from './walker';
import { symbolOf, unwrap } from '../ast';
import { unalias } from '../library';
import { readFunction } from '../functions';
import { nodeSpan } from '../operators';
import type { Knob, Lever } from '../types';

const CONCURRENCY = { concurrency: 'parallelism', highWaterMark: 'bufferSize' };
const HIGH_WATER = { highWaterMark: 'bufferSize' };
const NAMES_BOTH = { parallelism: 'concurrency', prefetch: 'highWaterMark' };
const NAMES_BUFFER = { prefetch: 'highWaterMark' };

const ZLIB = /^zlib\.create(Gunzip|Gzip|Inflate|Deflate|InflateRaw|DeflateRaw|Unzip|BrotliCompress|BrotliDecompress)$/;
const PIPELINES = new Set(['stream.pipeline', 'stream.promises.pipeline', 'stream.compose']);
const TRANSFORMS = new Set(['stream.Transform', 'stream.Duplex', 'stream.PassThrough']);

/** Methods that consume or merely listen to a stream: they end a chain and are not operators. */
const CONSUMERS = new Set(['forEach', 'toArray', 'reduce', 'some', 'every', 'find', 'pipe', 'on', 'once', 'read', 'resume', 'pause', 'destroy', 'iterator', 'setEncoding', 'unpipe']);

function nameNodeOf(callee: Node): Node {
  return Node.isPropertyAccessExpression(callee) ? callee.getNameNode() : callee;
}

function raw(kind: DialectRaw['kind'], idNode: Node, node: Node, inputs: DialectRaw[], detail: StageDetail, method = false): DialectRaw {
  return { dialect: 'node-streams', kind, idNode, node, method, inputs, partial: false, detail };
}

/** `Readable.from`, `fs.createReadStream`, `zlib.create*()`, `pipeline(…)`/`compose(…)`. */
function callStage(call: CallExpression, w: DialectWalker): DialectRaw | undefined {
  const callee = call.getExpression();
  const member = nodeMember(callee);
  if (!member) return undefined;
  const idNode = nameNodeOf(callee);
  if (member === 'stream.Readable.from') {
    const knobs: Record<string, Knob> = {};
    const options = mappedOptions(call, 1, HIGH_WATER, knobs);
    const input = w.resolve(call.getArguments()[0]);
    const arg = call.getArguments()[0];
    const detail: StageDetail = { label: `from(${argLabel(arg)})`, knobs, options, optionKeys: ['highWaterMark', 'objectMode'], levers: ['prefetch'], optionNames: NAMES_BUFFER };
    if (arg && Node.isArrayLiteralExpression(arg) && !arg.getElements().some((e) => Node.isSpreadElement(e))) detail.cardinality = arg.getElements().length;
    return raw('from', idNode, call, input ? [input] : [], detail);
  }
  if (member === 'fs.createReadStream') {
    const knobs = positional(call, [[0, 'path']]);
    const second = call.getArguments()[1];
    // Its highWaterMark counts bytes, not elements: read, shown, but no lever (as the runner records it).
    const detail: StageDetail = { label: `createReadStream(${argLabel(call.getArguments()[0])})`, knobs, levers: [], optionKeys: ['highWaterMark', 'encoding', 'start', 'end'], optionNames: NAMES_BUFFER };
    if (second && !Node.isObjectLiteralExpression(second)) {
      // `createReadStream(p, 'utf8')` takes an encoding there: no option can be added beside it.
      detail.options = { state: 'expression', text: second.getText(), span: nodeSpan(second) };
      knobs['bufferSize'] = { state: 'expression', text: second.getText(), span: nodeSpan(second) };
    } else {
      detail.options = mappedOptions(call, 1, HIGH_WATER, knobs);
    }
    return raw('from', idNode, call, [], detail);
  }
  if (ZLIB.test(member)) return raw('map', idNode, call, [], { label: `${idNode.getText()}()`, knobs: {}, levers: [] });
  if (PIPELINES.has(member)) return pipelineStage(call, idNode, member.endsWith('compose') ? 'compose' : 'pipeline', w);
  return undefined;
}

/**
 * A `Transform` (or `Duplex`/`PassThrough`) made with `new`, directly or from a class that extends
 * one. Its id is the `new` (where V8 places a construction in a stack). Its `highWaterMark` is read
 * where it reaches the stream — the object of `new Transform({ … })`, or the argument of a subclass
 * without a constructor of its own — but it is no lever: the runner records none for a Transform.
 */
function transformStage(node: NewExpression): DialectRaw | undefined {
  const ctor = node.getExpression();
  let direct = TRANSFORMS.has(nodeMember(ctor) ?? '');
  let optionsReachStream = direct;
  if (!direct && Node.isIdentifier(ctor)) {
    const decl = unalias(symbolOf(ctor))?.getDeclarations()[0];
    const base = decl && Node.isClassDeclaration(decl) ? decl.getExtends()?.getExpression() : undefined;
    direct = base !== undefined && TRANSFORMS.has(nodeMember(base) ?? '');
    optionsReachStream = direct && Node.isClassDeclaration(decl) && decl.getConstructors().length === 0;
  }
  if (!direct) return undefined;
  const knobs: Record<string, Knob> = {};
  const first = node.getArguments()[0];
  const detail: StageDetail = { label: `new ${nameNodeOf(ctor).getText()}(…)`, knobs, levers: [] };
  if (optionsReachStream && (!first || Node.isObjectLiteralExpression(first))) {
    detail.options = mappedOptions(node, 0, HIGH_WATER, knobs);
    detail.optionKeys = ['highWaterMark', 'objectMode', 'readableObjectMode', 'writableObjectMode', 'transform', 'flush'];
    detail.optionNames = NAMES_BUFFER;
    const transform = first?.getProperty('transform');
    if (transform && Node.isPropertyAssignment(transform)) detail.fnArg = transform.getInitializer();
  }
  return raw('flatMap', node, node, [], detail);
}

function method(call: CallExpression, name: string, up: DialectRaw | undefined, w: DialectWalker): DialectRaw | undefined {
  const callee = call.getExpression();
  if (!up || !Node.isPropertyAccessExpression(callee)) return undefined;
  const idNode = callee.getNameNode();
  if (name === 'pipe') {
    // `.pipe(zlib.createGunzip())`, `.pipe(new Upper())`: the stage keeps the id of its own call; a sink ends the chain.
    const dest = w.resolve(call.getArguments()[0]);
    if (!dest || dest.dialect !== 'node-streams' || dest.inputs.length > 0 || (dest.kind !== 'map' && dest.kind !== 'flatMap')) return undefined;
    w.claimed.add(dest.node);
    return { ...dest, inputs: [up] };
  }
  if (name === 'map' || name === 'filter' || name === 'flatMap') {
    const knobs: Record<string, Knob> = {};
    const options = mappedOptions(call, 1, CONCURRENCY, knobs);
    const fn = readFunction(call.getArguments()[0], call.getSourceFile().getFilePath(), undefined);
    // Concurrency only helps a fn that awaits: a sync fn still runs one call at a time on the main thread.
    const levers: Lever[] = fn?.fn.async ? ['parallelism', 'prefetch'] : ['prefetch'];
    const label = `${name}(${fn?.fn.name ?? argLabel(call.getArguments()[0])})`;
    const stage = raw(name, idNode, call, [up], { label, knobs, options, optionKeys: ['concurrency', 'highWaterMark', 'signal'], fnArg: call.getArguments()[0], levers, optionNames: NAMES_BOTH }, true);
    const nested = name === 'flatMap' ? nestedIn(call.getArguments()[0], w) : [];
    if (nested.length > 0) stage.nested = nested;
    return stage;
  }
  if (name === 'take' || name === 'drop') {
    const knobs = positional(call, [[0, 'count']]);
    const options = mappedOptions(call, 1, HIGH_WATER, knobs);
    return raw(
      name === 'take' ? 'take' : 'skip',
      idNode,
      call,
      [up],
      // Node's take/drop take only a `signal` (no highWaterMark): no lever, as the runner records them.
      { label: `${name}(${argLabel(call.getArguments()[0])})`, knobs, options, optionKeys: ['signal'], levers: [] },
      true,
    );
  }
  return undefined;
}

/**
 * What one argument of `pipeline(…)`/`compose(…)` is: a stage that the graph already knows (a
 * chain, `Readable.from`, `createReadStream`), a stage of its own (zlib, a Transform, a generator
 * function), a sink or callback (not a stage), or something Plumber cannot time.
 */
function argumentStage(arg: Node, index: number, last: boolean, prev: DialectRaw | undefined, w: DialectWalker, site: 'pipeline' | 'compose'): DialectRaw | null | 'unknown' {
  const a = unwrap(arg);
  const gen = asyncGeneratorOf(a);
  const label = (what: string): string => `${site}: ${what}`;
  if (gen) {
    const name = Node.isIdentifier(a) ? a.getText() : (gen.getName() ?? 'async function*');
    const consumes = consumedParameter(gen) >= 0;
    if (index === 0 || !consumes) return raw('from', arg, arg, [], { label: label(name), knobs: {}, levers: [], fnArg: arg });
    const stage = raw('flatMap', arg, arg, prev ? [prev] : [], { label: label(name), knobs: {}, levers: [], fnArg: arg });
    const nested = nestedStages(gen, w);
    if (nested.length > 0) stage.nested = nested;
    return stage;
  }
  if ((Node.isArrowFunction(a) || Node.isFunctionExpression(a)) && last) return null;
  const resolved = w.resolve(a);
  if (resolved && resolved.dialect === 'node-streams' && resolved.inputs.length === 0 && (resolved.kind === 'map' || resolved.kind === 'flatMap')) {
    w.claimed.add(resolved.node);
    const what = Node.isIdentifier(a) ? a.getText() : resolved.detail.label.replace(/\(\)$|\(…\)$/, '').replace(/^new /, '');
    const detail = { ...resolved.detail, label: label(what) };
    // A zlib stream registers where its factory is called (a stack names that call): it keeps that id.
    // A Transform is made by user code no stack names: its id is the argument's start.
    if (resolved.kind === 'map') return { ...resolved, inputs: prev ? [prev] : [], detail };
    return { ...resolved, idNode: arg, node: arg, inputs: prev ? [prev] : [], detail };
  }
  if (resolved && index === 0) return resolved;
  if (index === 0 && (Node.isArrayLiteralExpression(a) || Node.isIdentifier(a))) return raw('from', arg, arg, [], { label: label(argLabel(a)), knobs: {}, levers: [] });
  if (last) return null;
  return 'unknown';
}

function argText(arg: Node): string {
  const t = arg.getText().replace(/\s+/g, ' ');
  return t.length <= 40 ? t : `${t.slice(0, 39)}…`;
}

function pipelineStage(call: CallExpression, callee: Node, what: 'pipeline' | 'compose', w: DialectWalker): DialectRaw | undefined {
  const args = call.getArguments();
  const stages: Array<DialectRaw | null> = [];
  let prev: DialectRaw | undefined;
  args.forEach((arg, i) => {
    const s = argumentStage(arg, i, i === args.length - 1, prev, w, what);
    if (s === 'unknown') {
      w.stops.add(arg, `Argument ${i + 1} of ${what}() is \`${argText(arg)}\`, which Plumber cannot time: its time is counted in the stage after it.`);
      stages.push(null);
      return;
    }
    stages.push(s);
    if (s) prev = s;
  });
  if (!prev) return undefined;
  return { ...prev, argSites: { callee, args: stages } };
}

export const streams: Recogniser = {
  dialect: 'node-streams',
  stage: (node, w) => (Node.isCallExpression(node) ? callStage(node, w) : transformStage(node)),
  method,
  consumers: CONSUMERS,
};
