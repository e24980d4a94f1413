/**
 * The user function an operator calls: its name, where it is defined, whether it is async, whether
 * a worker thread could import it (a named export), and whether it is random.
 */
import { ArrowFunction, FunctionDeclaration, FunctionExpression, Node, SyntaxKind } from 'ts-morph';
import { fieldFacts } from './fields';
import { specifierOf, unalias } from './library';
import { nodeSpan } from './operators';
import type { FnInfo, Knob, RandomInfo } from './types';

type FunctionLike = FunctionDeclaration | ArrowFunction | FunctionExpression;

function asFunctionLike(node: Node | undefined): FunctionLike | undefined {
  if (!node) return undefined;
  if (Node.isFunctionDeclaration(node) || Node.isArrowFunction(node) || Node.isFunctionExpression(node)) return node;
  if (Node.isVariableDeclaration(node)) {
    let init = node.getInitializer();
    while (init && (Node.isParenthesizedExpression(init) || Node.isAsExpression(init) || Node.isSatisfiesExpression(init))) init = init.getExpression();
    if (init && (Node.isArrowFunction(init) || Node.isFunctionExpression(init))) return init;
  }
  return undefined;
}

/** True when the function is async or declared to return a promise. */
function isAsyncFunction(fn: FunctionLike): boolean {
  if (fn.isAsync()) return true;
  const declared = fn.getReturnTypeNode()?.getText();
  if (declared !== undefined) return /\bPromise(Like)?\s*</.test(declared);
  if (Node.isArrowFunction(fn)) {
    const body = fn.getBody();
    // An expression-bodied arrow that calls something async is awaited by the library as a promise.
    if (!Node.isBlock(body)) {
      // Only a call (or `new`) can hand back a promise without `async`: skip the checker otherwise.
      const inner = Node.isParenthesizedExpression(body) ? body.getExpression() : body;
      if (!inner || !(Node.isCallExpression(inner) || Node.isNewExpression(inner) || Node.isIdentifier(inner) || Node.isPropertyAccessExpression(inner))) return false;
      try {
        return /\bPromise(Like)?</.test(body.getType().getText());
      } catch {
        return false;
      }
    }
  }
  try {
    return /^Promise(Like)?</.test(fn.getReturnType().getText());
  } catch {
    return false;
  }
}

/** The name a declaration is exported under from its own file, if any. */
function exportedName(decl: Node): string | undefined {
  const file = decl.getSourceFile();
  if (Node.isFunctionDeclaration(decl)) {
    if (decl.isDefaultExport()) return undefined;
    if (decl.isExported()) return decl.getName();
  }
  if (Node.isVariableDeclaration(decl)) {
    const stmt = decl.getVariableStatement();
    if (stmt?.isExported()) return decl.getName();
  }
  const name = Node.isFunctionDeclaration(decl) || Node.isVariableDeclaration(decl) ? decl.getName() : undefined;
  if (!name) return undefined;
  // `export { decode }` / `export { decode as decodeJpeg }` later in the file.
  for (const exp of file.getExportDeclarations()) {
    if (specifierOf(exp) !== undefined) continue;
    for (const n of exp.getNamedExports()) {
      if (n.getName() === name) return n.getAliasNode()?.getText() ?? name;
    }
  }
  return undefined;
}

const CRYPTO_CALLS = /^(randomUUID|getRandomValues|randomInt|randomBytes|randomFillSync|randomFill)$/;

/** How deep `randomnessIn` follows calls into the user's own functions. */
const FOLLOW_DEPTH = 3;

/**
 * Randomness inside a function body: Math.random, crypto, the library's `ctx.rng`, or a call into
 * one of the project's own functions that does (followed FOLLOW_DEPTH calls deep).
 */
function randomnessIn(fn: FunctionLike, depth = 0, seen: Set<Node> = new Set()): RandomInfo | undefined {
  seen.add(fn);
  // Only the operator's own fn receives the element context as its second parameter.
  const ctxParam = depth === 0 ? fn.getParameters()[1] : undefined;
  const ctxName = ctxParam && Node.isIdentifier(ctxParam.getNameNode()) ? ctxParam.getName() : undefined;
  if (ctxParam && Node.isObjectBindingPattern(ctxParam.getNameNode())) {
    const rng = ctxParam
      .getNameNode()
      .getDescendantsOfKind(SyntaxKind.BindingElement)
      .find((b) => (b.getPropertyNameNode()?.getText() ?? b.getName()) === 'rng');
    if (rng) return { reason: 'ctx-rng', detail: 'it uses the per-element random generator ctx.rng', span: nodeSpan(rng) };
  }
  for (const access of fn.getDescendantsOfKind(SyntaxKind.PropertyAccessExpression)) {
    const obj = access.getExpression().getText();
    const name = access.getName();
    if (obj === 'Math' && name === 'random') return { reason: 'math-random', detail: 'it calls Math.random()', span: nodeSpan(access) };
    if (/^(crypto|webcrypto|globalThis\.crypto)$/.test(obj) && CRYPTO_CALLS.test(name)) {
      return { reason: 'crypto', detail: `it calls ${obj}.${name}()`, span: nodeSpan(access) };
    }
    if (ctxName && obj === ctxName && name === 'rng') return { reason: 'ctx-rng', detail: `it uses the per-element random generator ${ctxName}.rng`, span: nodeSpan(access) };
  }
  const calls = fn.getDescendantsOfKind(SyntaxKind.CallExpression);
  for (const call of calls) {
    const callee = call.getExpression();
    if (Node.isIdentifier(callee) && CRYPTO_CALLS.test(callee.getText())) {
      return { reason: 'crypto', detail: `it calls ${callee.getText()}()`, span: nodeSpan(callee) };
    }
  }
  if (depth >= FOLLOW_DEPTH) return undefined;
  for (const call of calls) {
    const callee = call.getExpression();
    if (!Node.isIdentifier(callee)) continue;
    let decl: Node | undefined;
    try {
      decl = unalias(callee.getSymbol())?.getDeclarations()[0];
    } catch {
      decl = undefined;
    }
    const target = asFunctionLike(decl);
    if (!target || seen.has(target) || target.getSourceFile().isDeclarationFile() || target.getSourceFile().isInNodeModules()) continue;
    const inner = randomnessIn(target, depth + 1, seen);
    if (inner) return { reason: inner.reason, detail: `it calls ${callee.getText()}(), which ${inner.detail.replace(/^it /, '')}`, span: nodeSpan(callee) };
  }
  return undefined;
}

export interface FnReading {
  fn: FnInfo;
  random?: RandomInfo;
}

/**
 * Read the function argument of map/filter/flatMap/interleave. `randomKnob` is the operator's
 * `random` option, which declares randomness the body may hide.
 */
export function readFunction(arg: Node | undefined, opFile: string, randomKnob: Knob | undefined): FnReading | undefined {
  if (!arg) return undefined;
  let random: RandomInfo | undefined;
  if (randomKnob?.state === 'literal' && randomKnob.value === true) {
    random = { reason: 'random-option', detail: 'it is declared `random: true`', span: randomKnob.span };
  }
  const inline = asFunctionLike(arg);
  if (inline) {
    const name = Node.isFunctionExpression(inline) ? inline.getName() : undefined;
    return {
      fn: { name, form: 'inline', async: isAsyncFunction(inline), file: opFile, definedAt: nodeSpan(inline), sameFile: true, fields: fieldFacts(inline) },
      random: random ?? randomnessIn(inline),
    };
  }
  if (!Node.isIdentifier(arg) && !Node.isPropertyAccessExpression(arg)) {
    return { fn: { form: 'other' }, random };
  }
  const nameNode = Node.isIdentifier(arg) ? arg : arg.getNameNode();
  const fn: FnInfo = { name: nameNode.getText(), form: 'reference' };
  let symbol;
  try {
    symbol = nameNode.getSymbol();
  } catch {
    symbol = undefined;
  }
  const importDecl = symbol?.getDeclarations()[0]?.getFirstAncestorByKind(SyntaxKind.ImportDeclaration);
  if (importDecl) fn.importSpecifier = specifierOf(importDecl);
  if (Node.isPropertyAccessExpression(arg)) {
    const ns = arg.getExpression();
    const nsDecl = ns.getSymbol()?.getDeclarations()[0];
    const nsImport = nsDecl?.getFirstAncestorByKind(SyntaxKind.ImportDeclaration);
    if (nsImport) fn.importSpecifier = specifierOf(nsImport);
  }
  const target = unalias(symbol);
  const decl = target?.getDeclarations().find((d) => asFunctionLike(d) !== undefined) ?? target?.getDeclarations()[0];
  const fnNode = asFunctionLike(decl);
  if (decl && fnNode) {
    const file = decl.getSourceFile().getFilePath();
    fn.file = file;
    fn.sameFile = file === opFile;
    fn.definedAt = nodeSpan(Node.isFunctionDeclaration(decl) ? (decl.getNameNode() ?? decl) : decl);
    fn.async = isAsyncFunction(fnNode);
    const declared = Node.isFunctionDeclaration(decl) || Node.isVariableDeclaration(decl) ? decl.getName() : undefined;
    if (declared) fn.declaredName = declared;
    if (!fn.exportName && declared) {
      // A top-level declaration can become a named export by writing `export ` before it.
      const stmt = Node.isVariableDeclaration(decl) ? decl.getVariableStatement() : decl;
      const single = !Node.isVariableDeclaration(decl) || decl.getVariableStatement()?.getDeclarations().length === 1;
      if (stmt && single && Node.isSourceFile(stmt.getParent()) && !(Node.isFunctionDeclaration(stmt) && stmt.isDefaultExport())) fn.exportInsertAt = stmt.getStart();
    }
    fn.exportName = exportedName(decl);
    random = random ?? randomnessIn(fnNode);
    fn.fields = fieldFacts(fnNode);
  }
  return { fn, random };
}
