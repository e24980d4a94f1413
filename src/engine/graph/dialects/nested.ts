/**
 * Stages built inside another stage's fn — the stream a Node `flatMap` callback returns, the
 * generator stages a tfjs `generator(fn)` or a generator stage iterates — each its own operator,
 * nested in the stage that runs the fn (`GraphOp.parent`), as the runner records them.
 */
import { Node } from 'ts-morph';
import { functionOf, returnedExpression, symbolOf, unwrap } from '../ast';
import { unalias } from '../library';
import type { DialectRaw } from './common';
import { asyncGeneratorOf, nestedStages } from './generators';
import type { DialectWalker } from './walker';

/** The chains `fnArg` builds per call: what it returns, or for an async generator what its `for await` loops iterate. */
export function nestedIn(fnArg: Node | undefined, w: DialectWalker): DialectRaw[] {
  if (!fnArg) return [];
  const gen = asyncGeneratorOf(fnArg);
  if (gen) return nestedStages(gen, w);
  const a = unwrap(fnArg);
  const fn = Node.isIdentifier(a) ? functionOf(unalias(symbolOf(a))?.getDeclarations()[0]) : functionOf(a);
  if (!fn || fn.getSourceFile().isInNodeModules()) return [];
  const inner = w.resolve(returnedExpression(fn));
  return inner ? [inner] : [];
}
