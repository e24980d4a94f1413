/**
 * Chains that look like pipelines but that no extractor can follow, found so the editor can say
 * so: a known dialect's chain built by `reduce` over a list of stages (its stages exist only at run
 * time), and a chain of pipeline operators on a value from a package Plumber does not read.
 */
import { CallExpression, Node, SourceFile, SyntaxKind } from 'ts-morph';
import { unwrap } from '../ast';
import { moduleRefOf } from './bindings';
import type { DialectWalker } from './walker';

/** Method names arrays do not have, which only a pipeline library's chain uses. */
const PIPELINE_ONLY = new Set(['batch', 'shuffle', 'prefetch', 'pipe', 'mapAsync', 'interleave', 'window', 'buffer', 'parallel', 'through', 'repeat', 'unbatch', 'padBatch']);

/** Modules whose chains an extractor reads (or plumber-data's own): not "unknown". */
const KNOWN = /^(plumber-data|@tensorflow\/tfjs(-node|-node-gpu|-data)?|stream(\/promises)?|fs|zlib|node:.*)$/;

/** The receiver a method chain starts from (`h(src)` in `h(src).map(f).batch(2)`). */
function chainRoot(call: CallExpression): { root: Node; methods: string[] } {
  const methods: string[] = [];
  let node: Node = call;
  for (let i = 0; i < 100; i++) {
    const n = unwrap(node);
    if (!Node.isCallExpression(n)) return { root: n, methods };
    const callee = n.getExpression();
    if (!Node.isPropertyAccessExpression(callee)) return { root: n, methods };
    methods.push(callee.getName());
    node = callee.getExpression();
  }
  return { root: node, methods };
}

function isChainTop(call: CallExpression): boolean {
  const parent = call.getParent();
  return !(parent && Node.isPropertyAccessExpression(parent) && Node.isCallExpression(parent.getParent()));
}

/** Adds the stops for chains built by `reduce` and for chains of an unknown pipeline library. */
export function findUnfollowed(sf: SourceFile, w: DialectWalker): void {
  for (const call of sf.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    const callee = call.getExpression();
    if (!Node.isPropertyAccessExpression(callee)) continue;
    if (callee.getName() === 'reduce' && call.getArguments().length === 2) {
      const seed = w.resolve(call.getArguments()[1]);
      // The seed is not a pipeline of its own either: what runs is the reduced chain.
      if (seed) w.claimed.add(seed.node);
      if (seed) w.stops.add(callee.getNameNode(), `This ${seed.dialect} chain gets its stages from reduce() at run time, so Plumber cannot tell which stage is on which line: it is not shown.`);
      continue;
    }
    if (!isChainTop(call) || w.resolve(call)) continue;
    const { root, methods } = chainRoot(call);
    const distinctive = methods.find((m) => PIPELINE_ONLY.has(m));
    if (!distinctive || methods.length < 2) continue;
    const rootCallee = Node.isCallExpression(root) ? root.getExpression() : root;
    const ref = Node.isIdentifier(rootCallee) || Node.isPropertyAccessExpression(rootCallee) ? moduleRefOf(rootCallee) : undefined;
    if (!ref || ref.module.startsWith('.') || ref.module.startsWith('/') || KNOWN.test(ref.module)) continue;
    w.stops.add(callee.getNameNode(), `This chain (.${methods.reverse().join('(), .')}()) is built with '${ref.module}', a library Plumber does not read: it is not profiled or shown.`);
  }
}
