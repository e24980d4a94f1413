/**
 * Which module a name comes from, read from the file's own imports: `tf.data.generator` is the
 * member path `data.generator` of `@tensorflow/tfjs` when `tf` is `import * as tf from
 * '@tensorflow/tfjs'`, `const tf = require('@tensorflow/tfjs')`, or `generator` is `import {
 * generator } from '@tensorflow/tfjs-data'`. Read without the type checker, so it answers in a
 * file whose imports do not resolve (the user's project without its node_modules, Node's
 * built-ins without @types/node).
 */
import { Node, SourceFile, SyntaxKind } from 'ts-morph';
import { symbolOf, unwrap } from '../ast';
import { specifierOf } from '../library';

/** A member path inside a module: `{ module: 'node:stream', path: ['Readable', 'from'] }`. */
export interface ModuleRef {
  /** The specifier as written, without a `node:` prefix. */
  module: string;
  path: string[];
}

function specifierText(node: Node | undefined): string | undefined {
  return node && (Node.isStringLiteral(node) || Node.isNoSubstitutionTemplateLiteral(node)) ? node.getLiteralValue().replace(/^node:/, '') : undefined;
}

/** The module an import declaration names, without `node:`; undefined while it is not a string yet (half-typed code). */
function importedModule(decl: Node): string | undefined {
  const imp = decl.getFirstAncestorByKind(SyntaxKind.ImportDeclaration);
  return imp ? specifierOf(imp)?.replace(/^node:/, '') : undefined;
}

/** `require('m')` → 'm'. */
function requiredModule(expr: Node | undefined): string | undefined {
  const e = expr ? unwrap(expr) : undefined;
  if (!e || !Node.isCallExpression(e) || e.getExpression().getText() !== 'require') return undefined;
  return specifierText(e.getArguments()[0]);
}

/** The module ref a declaration binds its name to (an import, a `require`, a destructuring or alias of another ref). */
function refOfDeclaration(decl: Node, depth: number): ModuleRef | undefined {
  if (Node.isNamespaceImport(decl)) {
    const module = importedModule(decl);
    return module ? { module, path: [] } : undefined;
  }
  if (Node.isImportClause(decl)) {
    // A default import of a CommonJS module (`import stream from 'node:stream'`) is the module itself.
    const module = importedModule(decl);
    return module ? { module, path: [] } : undefined;
  }
  if (Node.isImportSpecifier(decl)) {
    const module = importedModule(decl);
    return module ? { module, path: [decl.getName()] } : undefined;
  }
  if (Node.isBindingElement(decl)) {
    const pattern = decl.getParent();
    const holder = pattern.getParent();
    const member = decl.getPropertyNameNode()?.getText() ?? decl.getName();
    if (!Node.isVariableDeclaration(holder)) return undefined;
    const base = valueRef(holder.getInitializer(), depth + 1);
    return base ? { module: base.module, path: [...base.path, member] } : undefined;
  }
  if (Node.isVariableDeclaration(decl)) return valueRef(decl.getInitializer(), depth + 1);
  return undefined;
}

/** The ref an initializer holds: `require('m')`, `require('m').x`, or a path from another ref (`tf.data`). */
function valueRef(init: Node | undefined, depth: number): ModuleRef | undefined {
  if (!init || depth > 6) return undefined;
  const module = requiredModule(init);
  if (module) return { module, path: [] };
  const e = unwrap(init);
  if (Node.isPropertyAccessExpression(e) || Node.isIdentifier(e)) return moduleRefOf(e, depth + 1);
  return undefined;
}

/** Without a symbol (imports the checker cannot bind), find the top-level declaration of `name` syntactically. */
function syntacticDeclaration(sf: SourceFile, name: string): Node | undefined {
  for (const imp of sf.getImportDeclarations()) {
    const ns = imp.getNamespaceImport();
    if (ns?.getText() === name) return ns.getParent();
    const def = imp.getDefaultImport();
    if (def?.getText() === name) return imp.getImportClause();
    const named = imp.getNamedImports().find((n) => (n.getAliasNode()?.getText() ?? n.getName()) === name);
    if (named) return named;
  }
  for (const v of sf.getVariableDeclarations()) {
    const n = v.getNameNode();
    if (Node.isIdentifier(n) && n.getText() === name) return v;
    if (Node.isObjectBindingPattern(n)) {
      const el = n.getElements().find((b) => b.getName() === name);
      if (el) return el;
    }
  }
  return undefined;
}

/**
 * The module and member path an expression names (`tf.data.generator`, `Readable.from`,
 * `zlib.createGunzip`), or undefined when its root is not bound to a module by an import or a
 * `require`. Locals that shadow an import are told apart by the checker's symbol when there is one.
 */
export function moduleRefOf(expr: Node, depth = 0): ModuleRef | undefined {
  if (depth > 8) return undefined;
  const e = unwrap(expr);
  if (Node.isPropertyAccessExpression(e)) {
    const base = moduleRefOf(e.getExpression(), depth + 1);
    return base ? { module: base.module, path: [...base.path, e.getName()] } : undefined;
  }
  if (!Node.isIdentifier(e)) return undefined;
  const symbol = symbolOf(e);
  const decl = symbol?.getDeclarations()[0] ?? syntacticDeclaration(e.getSourceFile(), e.getText());
  if (!decl) return undefined;
  // A namespace import's symbol is declared on the NamespaceImport node; its parent is the clause.
  return refOfDeclaration(Node.isImportClause(decl) && decl.getNamespaceImport() ? decl.getNamespaceImport()! : decl, depth);
}

const TFJS = new Set(['@tensorflow/tfjs', '@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-data']);

/** The member path in tfjs's `data` namespace (`['generator']` for `tf.data.generator`), or undefined. */
export function tfjsDataMember(expr: Node): string | undefined {
  const ref = moduleRefOf(expr);
  if (!ref || !TFJS.has(ref.module)) return undefined;
  // In @tensorflow/tfjs-data the module itself is what the umbrella packages export as `data`.
  const path = ref.module === '@tensorflow/tfjs-data' ? ref.path : ref.path[0] === 'data' ? ref.path.slice(1) : undefined;
  return path && path.length === 1 ? path[0] : undefined;
}

/** The member path in one of Node's built-in modules (`stream`, `stream/promises`, `fs`, `zlib`), as `stream.Readable.from`; undefined otherwise. */
export function nodeMember(expr: Node): string | undefined {
  const ref = moduleRefOf(expr);
  if (!ref) return undefined;
  const [base, sub] = ref.module.split('/');
  if (!base || !['stream', 'fs', 'zlib'].includes(base)) return undefined;
  const path = sub ? [sub, ...ref.path] : ref.path;
  // `stream.default.pipeline` and `stream.promises.pipeline` name what `stream.pipeline` does for this purpose.
  const cleaned = path.filter((p) => p !== 'default');
  return [base, ...cleaned].join('.');
}
