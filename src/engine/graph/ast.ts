/**
 * Small readings of the syntax tree every extractor shares: what an expression is once wrappers
 * are peeled, which function a declaration holds, what it returns, and what value a variable holds
 * at a point of the file.
 */
import { CallExpression, Node, Symbol as MorphSymbol, SyntaxKind, VariableDeclaration, VariableDeclarationKind } from 'ts-morph';
import { unalias } from './library';

const WRAPPERS = new Set([SyntaxKind.ParenthesizedExpression, SyntaxKind.AsExpression, SyntaxKind.NonNullExpression, SyntaxKind.SatisfiesExpression, SyntaxKind.TypeAssertionExpression]);

export function unwrap(node: Node): Node {
  let n = node;
  while (WRAPPERS.has(n.getKind())) n = (n as Node & { getExpression(): Node }).getExpression();
  return n;
}

export function symbolOf(node: Node): MorphSymbol | undefined {
  try {
    return node.getSymbol();
  } catch {
    return undefined;
  }
}

export type FunctionNode = Node & { getBody(): Node | undefined; getParameters(): Node[] };

export function functionOf(decl: Node | undefined): FunctionNode | undefined {
  if (!decl) return undefined;
  if (Node.isFunctionDeclaration(decl) || Node.isArrowFunction(decl) || Node.isFunctionExpression(decl)) return decl;
  if (Node.isVariableDeclaration(decl)) {
    const init = decl.getInitializer();
    const inner = init ? unwrap(init) : undefined;
    if (inner && (Node.isArrowFunction(inner) || Node.isFunctionExpression(inner))) return inner;
  }
  return undefined;
}

/**
 * Follows a call of the user's helper `fn` into what it returns: `resolve(returned)` with each
 * parameter bound to its argument in `bindings` while it runs, `fn` held in `active` so a helper
 * that calls itself stops. Undefined when `fn` is already being followed.
 */
export function throughHelper<T>(fn: FunctionNode, call: CallExpression, active: Set<Node>, bindings: Map<Node, Node>, resolve: (returned: Node | undefined) => T): T | undefined {
  if (active.has(fn)) return undefined;
  active.add(fn);
  const bound: Node[] = [];
  const args = call.getArguments();
  fn.getParameters().forEach((p, i) => {
    const arg = args[i];
    if (arg && Node.isParameterDeclaration(p)) {
      bindings.set(p, arg);
      bound.push(p);
    }
  });
  try {
    return resolve(returnedExpression(fn));
  } finally {
    active.delete(fn);
    for (const p of bound) bindings.delete(p);
  }
}

/** The expression a function returns (an expression body, or its last `return`). */
export function returnedExpression(fn: FunctionNode): Node | undefined {
  const body = fn.getBody();
  if (!body) return undefined;
  if (!Node.isBlock(body)) return body;
  const returns = body.getDescendantsOfKind(SyntaxKind.ReturnStatement).filter((r) => r.getFirstAncestor((a) => Node.isFunctionLikeDeclaration(a) || Node.isArrowFunction(a) || Node.isFunctionExpression(a)) === fn);
  for (let i = returns.length - 1; i >= 0; i--) {
    const e = returns[i]!.getExpression();
    if (e) return e;
  }
  return undefined;
}

/** The values variables hold, with each `let`'s assignments found once per extraction. */
export class Values {
  private readonly assignments = new Map<VariableDeclaration, Node[]>();

  /** The value a variable holds at `pos`: its initializer, or the last `x = …` before `pos` for `let`/`var`. */
  valueAt(decl: VariableDeclaration, pos: number): Node | undefined {
    const init = decl.getInitializer();
    const kind = decl.getVariableStatement()?.getDeclarationKind();
    if (kind === VariableDeclarationKind.Const || kind === undefined) return init;
    let assigned = this.assignments.get(decl);
    if (!assigned) {
      assigned = [];
      const name = decl.getName();
      const scope = decl.getFirstAncestor((a) => Node.isBlock(a) || Node.isSourceFile(a)) ?? decl.getSourceFile();
      for (const bin of scope.getDescendantsOfKind(SyntaxKind.BinaryExpression)) {
        if (bin.getOperatorToken().getKind() !== SyntaxKind.EqualsToken) continue;
        const left = bin.getLeft();
        if (!Node.isIdentifier(left) || left.getText() !== name) continue;
        const target = unalias(symbolOf(left))?.getDeclarations()[0];
        if (target !== undefined && target !== decl) continue;
        assigned.push(bin);
      }
      this.assignments.set(decl, assigned);
    }
    let best: Node | undefined = init;
    let bestPos = decl.getStart();
    for (const bin of assigned) {
      if (bin.getEnd() <= pos && bin.getStart() > bestPos && Node.isBinaryExpression(bin)) {
        best = bin.getRight();
        bestPos = bin.getStart();
      }
    }
    return best;
  }
}
