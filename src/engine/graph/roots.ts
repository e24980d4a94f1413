/**
 * Where a file's pipelines start: its exports (ES and CommonJS), each a chain or a zero-argument
 * factory that returns one. Every dialect's extractor starts from the same roots.
 */
import { Node, SourceFile, SyntaxKind } from 'ts-morph';
import { Values, functionOf, returnedExpression, unwrap } from './ast';

export interface Root {
  name: string;
  exported: boolean;
  factory: boolean;
  head: Node;
  expr: Node | undefined;
}

export function exportedRoots(sf: SourceFile, values: Values): Root[] {
  const roots: Root[] = [];
  let exported: ReadonlyMap<string, Node[]>;
  try {
    exported = sf.getExportedDeclarations();
  } catch {
    return roots;
  }
  for (const [name, decls] of exported) {
    const decl = decls[0];
    if (!decl) continue;
    if (Node.isVariableDeclaration(decl)) {
      const value = values.valueAt(decl, Number.MAX_SAFE_INTEGER);
      const fn = value ? functionOf(unwrap(value)) : undefined;
      if (fn) {
        if (fn.getParameters().length === 0) roots.push({ name, exported: true, factory: true, head: decl.getNameNode(), expr: returnedExpression(fn) });
      } else {
        roots.push({ name, exported: true, factory: false, head: decl.getNameNode(), expr: value });
      }
    } else if (Node.isFunctionDeclaration(decl)) {
      if (decl.getParameters().length === 0 && decl.hasBody()) roots.push({ name, exported: true, factory: true, head: decl.getNameNode() ?? decl, expr: returnedExpression(decl) });
    } else if (Node.isExportAssignment(decl)) {
      roots.push({ name, exported: true, factory: false, head: decl, expr: decl.getExpression() });
    } else if (Node.isExpression(decl)) {
      const fn = functionOf(decl);
      if (fn) {
        if (fn.getParameters().length === 0) roots.push({ name, exported: true, factory: true, head: decl.getParent() ?? decl, expr: returnedExpression(fn) });
      } else {
        roots.push({ name, exported: true, factory: false, head: decl.getParent() ?? decl, expr: decl });
      }
    }
  }
  const named = new Set(roots.map((r) => r.name));
  for (const r of commonJsRoots(sf)) if (!named.has(r.name)) roots.push(r);
  return roots;
}

/**
 * A root for `name = value` as an export: a zero-parameter function is a factory, anything else the
 * pipeline itself. A name (`module.exports = { train }`) stands for the top-level function or
 * variable it names in the file.
 */
function rootOf(name: string, head: Node, value: Node, sf: SourceFile): Root | undefined {
  const v = unwrap(value);
  const local = Node.isIdentifier(v) ? (sf.getFunction(v.getText()) ?? sf.getVariableDeclaration(v.getText())) : undefined;
  const fn = functionOf(local ?? v);
  if (!fn) return { name, exported: true, factory: false, head, expr: local && Node.isVariableDeclaration(local) ? local.getInitializer() : value };
  return fn.getParameters().length === 0 ? { name, exported: true, factory: true, head, expr: returnedExpression(fn) } : undefined;
}

/**
 * CommonJS exports at the top level of a file, which ts-morph does not report as exported
 * declarations: `module.exports.name = …`, `exports.name = …` and `module.exports = { name, other: … }`
 * (the runner finds them by name as it finds ES exports).
 */
function commonJsRoots(sf: SourceFile): Root[] {
  const roots: Root[] = [];
  let reassigned = false;
  for (const stmt of sf.getStatements()) {
    if (!Node.isExpressionStatement(stmt)) continue;
    const bin = stmt.getExpression();
    if (!Node.isBinaryExpression(bin) || bin.getOperatorToken().getKind() !== SyntaxKind.EqualsToken) continue;
    const left = bin.getLeft().getText().replace(/\s+/g, '');
    const right = bin.getRight();
    const member = /^(module\.)?exports\.([A-Za-z_$][\w$]*)$/.exec(left);
    // After `module.exports = …` the `exports` variable is the object that no longer exports.
    if (member && (member[1] || !reassigned)) {
      const root = rootOf(member[2]!, bin.getLeft(), right, sf);
      if (root) roots.push(root);
      continue;
    }
    if (left !== 'module.exports') continue;
    // A new exports object: what was assigned to the old one is not exported.
    roots.length = 0;
    reassigned = true;
    const object = unwrap(right);
    if (!Node.isObjectLiteralExpression(object)) continue;
    for (const prop of object.getProperties()) {
      let root: Root | undefined;
      if (Node.isPropertyAssignment(prop)) {
        const value = prop.getInitializer();
        if (value) root = rootOf(prop.getName(), prop.getNameNode(), value, sf);
      } else if (Node.isShorthandPropertyAssignment(prop)) {
        root = rootOf(prop.getName(), prop.getNameNode(), prop.getNameNode(), sf);
      }
      if (root) roots.push(root);
    }
  }
  return roots;
}

/**
 * What a pipeline converted to plumber-data hands its consumers through (see src/engine/convert):
 * `toTfDataset(chain, tf)` (a tfjs Dataset for `model.fitDataset`) and a lazy async generator
 * `(async function* () { yield* chain; })()`. The chain inside is the pipeline the export is;
 * anything else is returned as it is.
 */
export function throughAdapters(expr: Node | undefined): Node | undefined {
  let e = expr === undefined ? undefined : unwrap(expr);
  for (let depth = 0; e !== undefined && depth < 4 && Node.isCallExpression(e); depth++) {
    const callee = unwrap(e.getExpression());
    const name = Node.isIdentifier(callee) ? callee.getText() : Node.isPropertyAccessExpression(callee) ? callee.getName() : undefined;
    const args = e.getArguments();
    if (name === 'toTfDataset' && args.length >= 1) {
      e = unwrap(args[0]!);
      continue;
    }
    if (Node.isFunctionExpression(callee) && callee.isAsync() && callee.isGenerator() && callee.getParameters().length === 0 && args.length === 0) {
      const body = callee.getBody();
      const stmts = body && Node.isBlock(body) ? body.getStatements() : [];
      const only = stmts.length === 1 && Node.isExpressionStatement(stmts[0]!) ? unwrap(stmts[0].getExpression()) : undefined;
      if (only && Node.isYieldExpression(only) && only.getAsteriskToken() !== undefined && only.getExpression()) {
        e = unwrap(only.getExpression()!);
        continue;
      }
    }
    break;
  }
  return e;
}
