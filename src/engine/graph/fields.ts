/**
 * Which fields of its element a user fn reads and which it changes, decided from the source where
 * the source decides it (issue 54: a filter is tried ahead of a map only when it reads nothing the
 * map writes). Unknown is said as `undefined`, never guessed: a fn that hands its element whole to
 * another call, reads it by a computed key, or builds a new element reads or writes "anything".
 * The equivalence check on a sample has the last word either way.
 */
import { ArrowFunction, FunctionDeclaration, FunctionExpression, Node, SyntaxKind } from 'ts-morph';
import type { FieldFacts } from './types';

type FunctionLike = FunctionDeclaration | ArrowFunction | FunctionExpression;

/** What a fn does with the fields of its element (its first parameter). */
export function fieldFacts(fn: FunctionLike): FieldFacts {
  const params = fn.getParameters();
  const usesContext = params.length > 1;
  const first = params[0];
  if (!first) return { reads: [], writes: [], usesContext };
  const nameNode = first.getNameNode();
  if (Node.isObjectBindingPattern(nameNode)) {
    const elements = nameNode.getElements();
    // `({ label, ...rest })`: the rest holds every other field.
    if (elements.some((e) => e.getDotDotDotToken() !== undefined)) return { usesContext };
    const reads = elements.map((e) => e.getPropertyNameNode()?.getText() ?? e.getName());
    return { reads: unique(reads), usesContext };
  }
  if (!Node.isIdentifier(nameNode)) return { usesContext };
  return { ...usesOf(fn, nameNode.getText()), usesContext };
}

/** Reads, writes (mutations and the fields a returned `{ ...x, f: … }` sets) of the parameter named `name`. */
function usesOf(fn: FunctionLike, name: string): Omit<FieldFacts, 'usesContext'> {
  const body = fn.getBody();
  if (!body) return {};
  const reads: string[] = [];
  const mutated: string[] = [];
  let whole = false;
  const refs = [body, ...body.getDescendants()].filter((n) => Node.isIdentifier(n) && n.getText() === name);
  for (const ref of refs) {
    const parent = ref.getParent();
    if (!parent) continue;
    // `{ name }` shorthand or a key of an object literal is not a use of the element.
    if (Node.isPropertyAccessExpression(parent) && parent.getNameNode() === ref) continue;
    if (Node.isPropertyAssignment(parent) && parent.getNameNode() === ref) continue;
    const field = fieldOf(parent, ref);
    if (field !== undefined) {
      reads.push(field);
      if (isAssigned(parent)) mutated.push(field);
      continue;
    }
    if (Node.isSpreadAssignment(parent) || isReturned(ref, fn)) continue;
    whole = true;
  }
  // An element handed on whole (to a call, a variable) may be read and changed there: both unknown.
  if (whole) return {};
  const writes = returnedWrites(fn, name, mutated);
  return { reads: unique(reads), ...(writes ? { writes: unique(writes) } : {}) };
}

/** `x.f` or `x['f']` with `ref` as `x`: the field name. */
function fieldOf(parent: Node, ref: Node): string | undefined {
  if (Node.isPropertyAccessExpression(parent) && parent.getExpression() === ref) return parent.getName();
  if (Node.isElementAccessExpression(parent) && parent.getExpression() === ref) {
    const arg = parent.getArgumentExpression();
    if (arg && (Node.isStringLiteral(arg) || Node.isNoSubstitutionTemplateLiteral(arg))) return arg.getLiteralValue();
  }
  return undefined;
}

function isAssigned(access: Node): boolean {
  const p = access.getParent();
  if (Node.isBinaryExpression(p) && p.getLeft() === access && /=$/.test(p.getOperatorToken().getText()) && !/^[=!]==?$/.test(p.getOperatorToken().getText())) return true;
  if ((Node.isPrefixUnaryExpression(p) || Node.isPostfixUnaryExpression(p)) && [SyntaxKind.PlusPlusToken, SyntaxKind.MinusMinusToken].includes(p.getOperatorToken())) return true;
  return Node.isDeleteExpression(p);
}

/** The expressions the fn returns: an expression body, or each `return` of its own body. */
function returned(fn: FunctionLike): Node[] | undefined {
  const body = fn.getBody();
  if (!body) return undefined;
  if (!Node.isBlock(body)) return [unwrap(body)];
  const out: Node[] = [];
  for (const r of body.getDescendantsOfKind(SyntaxKind.ReturnStatement)) {
    if (r.getFirstAncestor((a) => Node.isFunctionLikeDeclaration(a)) !== fn) continue;
    const e = r.getExpression();
    if (!e) return undefined;
    out.push(unwrap(e));
  }
  return out;
}

function unwrap(n: Node): Node {
  let e = n;
  while (Node.isParenthesizedExpression(e) || Node.isAsExpression(e) || Node.isSatisfiesExpression(e) || Node.isAwaitExpression(e)) e = e.getExpression();
  return e;
}

function isReturned(ref: Node, fn: FunctionLike): boolean {
  return (returned(fn) ?? []).includes(ref);
}

/**
 * The fields a map's result differs from its element in: for `return x` the fields it mutated;
 * for `return { ...x, a: …, b }` those set after the spread (and any before it, which may add a
 * field); undefined when any return builds something else.
 */
function returnedWrites(fn: FunctionLike, name: string, mutated: string[]): string[] | undefined {
  const rets = returned(fn);
  if (!rets || rets.length === 0) return undefined;
  const writes = [...mutated];
  for (const r of rets) {
    if (Node.isIdentifier(r) && r.getText() === name) continue;
    if (!Node.isObjectLiteralExpression(r)) return undefined;
    const props = r.getProperties();
    const spreads = props.filter((p) => Node.isSpreadAssignment(p));
    if (spreads.length !== 1 || unwrap((spreads[0] as import('ts-morph').SpreadAssignment).getExpression()).getText() !== name) return undefined;
    for (const p of props) {
      if (Node.isSpreadAssignment(p)) continue;
      if (Node.isPropertyAssignment(p) || Node.isShorthandPropertyAssignment(p) || Node.isMethodDeclaration(p)) {
        const key = p.getNameNode();
        if (Node.isComputedPropertyName(key)) return undefined;
        writes.push(Node.isStringLiteral(key) ? key.getLiteralValue() : key.getText());
      } else return undefined;
    }
  }
  return writes;
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)].sort();
}
