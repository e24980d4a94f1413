/**
 * Recognising plumber-data: which identifiers name its source functions (`from`, `files`, …),
 * whichever way the user imported them — named, aliased, through a namespace, `require`, or a local
 * barrel that re-exports the library. The type checker answers when it can; when the library's types
 * are missing, the import declarations are read syntactically.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Node, SourceFile, Symbol as MorphSymbol } from 'ts-morph';

export const LIBRARY = 'plumber-data';

/** The readers of stored formats (src/data/readers.ts): sources with the knobs `parallelism` (shards at once) and `placement`. */
export const READER_FUNCTIONS = ['csv', 'jsonLines', 'tfrecord', 'webdataset', 'parquet', 'arrow'] as const;

/** Functions of the library that create a dataset (the heads of chains). */
export const SOURCE_FUNCTIONS = new Set(['from', 'range', 'files', 'lines', 'zip', 'concatenate', 'sampleFromDatasets', 'chooseFromDatasets', ...READER_FUNCTIONS]);

/** Source functions whose inputs are datasets passed as arguments (in argument order), not a receiver. */
export const MULTI_INPUT_SOURCES = new Set(['zip', 'concatenate', 'sampleFromDatasets', 'chooseFromDatasets']);

/** Methods of `Dataset` that are operators. */
export const METHOD_OPERATORS = new Set([
  'map',
  'filter',
  'flatMap',
  'interleave',
  'batch',
  'unbatch',
  'shuffle',
  'prefetch',
  'cache',
  'repeat',
  'take',
  'skip',
  'zip',
  'concatenate',
  'shard',
  'enumerate',
  'window',
  'paddedBatch',
  'bucketBySequenceLength',
  'groupByWindow',
  'rebatch',
  'scan',
  'ignoreErrors',
]);
// `reduce` is a method too, but it consumes the dataset and returns a promise of a value: it ends a
// chain and is not an operator, so it is in neither set.

const packageNameCache = new Map<string, string | null>();

/** The `name` of the nearest package.json above `file` (cached per directory). */
function nearestPackageName(file: string): string | null {
  let dir = path.dirname(file);
  const visited: string[] = [];
  for (;;) {
    const cached = packageNameCache.get(dir);
    if (cached !== undefined) {
      for (const v of visited) packageNameCache.set(v, cached);
      return cached;
    }
    visited.push(dir);
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg)) {
      let name: string | null = null;
      try {
        const parsed = JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown };
        name = typeof parsed.name === 'string' ? parsed.name : null;
      } catch {
        name = null;
      }
      for (const v of visited) packageNameCache.set(v, name);
      return name;
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      for (const v of visited) packageNameCache.set(v, null);
      return null;
    }
    dir = parent;
  }
}

/** True when `file` belongs to the plumber-data package (installed, symlinked, or its own sources). */
export function isLibraryFile(file: string): boolean {
  if (file.includes(`/node_modules/${LIBRARY}/`)) return true;
  return nearestPackageName(file) === LIBRARY;
}

type WithSpecifier = { getModuleSpecifierValue(): string | undefined; getModuleSpecifierSourceFile(): SourceFile | undefined };

/** The module specifier's text, or undefined while it is not a string literal (half-typed code). */
export function specifierOf(decl: WithSpecifier): string | undefined {
  try {
    return decl.getModuleSpecifierValue();
  } catch {
    return undefined;
  }
}

/** The file a module specifier resolves to, or undefined when it does not (or is not a string yet). */
export function specifierFile(decl: WithSpecifier): SourceFile | undefined {
  try {
    return decl.getModuleSpecifierSourceFile();
  } catch {
    return undefined;
  }
}

/** Follow import/export aliases to the symbol that is declared somewhere. */
export function unalias(symbol: MorphSymbol | undefined): MorphSymbol | undefined {
  let s = symbol;
  for (let i = 0; s && s.isAlias() && i < 10; i++) {
    const next = s.getAliasedSymbol();
    if (!next || next === s) break;
    s = next;
  }
  return s;
}

/** Whether the resolved symbol is declared by plumber-data, and under which name. */
function librarySymbolName(symbol: MorphSymbol | undefined): string | undefined {
  const target = unalias(symbol);
  if (!target) return undefined;
  const decl = target.getDeclarations()[0];
  // Only module-level functions create datasets: `Dataset.prototype.zip` is a method, not the `zip` source.
  if (!decl || !(Node.isFunctionDeclaration(decl) || Node.isVariableDeclaration(decl))) return undefined;
  return isLibraryFile(decl.getSourceFile().getFilePath()) ? target.getName() : undefined;
}

function safeSymbol(node: Node): MorphSymbol | undefined {
  try {
    return node.getSymbol();
  } catch {
    return undefined;
  }
}

/**
 * If `callee` (the expression before a call's parentheses) names one of plumber-data's source
 * functions, return that function's name as the library spells it (`from` for `source` in
 * `import { from as source }`).
 */
export function sourceFunctionName(callee: Node): string | undefined {
  if (Node.isIdentifier(callee)) {
    const viaChecker = librarySymbolName(safeSymbol(callee));
    if (viaChecker) return SOURCE_FUNCTIONS.has(viaChecker) ? viaChecker : undefined;
    const viaSyntax = syntacticBinding(callee.getSourceFile(), callee.getText(), 0);
    return viaSyntax && viaSyntax !== '*' && SOURCE_FUNCTIONS.has(viaSyntax) ? viaSyntax : undefined;
  }
  if (Node.isPropertyAccessExpression(callee)) {
    const member = callee.getName();
    if (!SOURCE_FUNCTIONS.has(member)) return undefined;
    const viaChecker = librarySymbolName(safeSymbol(callee.getNameNode()));
    if (viaChecker) return viaChecker === member ? member : undefined;
    const target = callee.getExpression();
    if (Node.isIdentifier(target) && syntacticBinding(callee.getSourceFile(), target.getText(), 0) === '*') return member;
  }
  return undefined;
}

/**
 * What the local name `local` is bound to by the file's imports, read without types: the library
 * export's name, `'*'` for a namespace of the library, or undefined. Follows relative barrels that
 * re-export the library (`export * from 'plumber-data'`) a few levels deep.
 */
export function syntacticBinding(file: SourceFile, local: string, depth: number): string | undefined {
  if (depth > 3) return undefined;
  for (const imp of file.getImportDeclarations()) {
    const spec = specifierOf(imp);
    const fromLibrary = spec === LIBRARY;
    const ns = imp.getNamespaceImport();
    if (ns && ns.getText() === local) {
      if (fromLibrary || barrelReExportsAll(specifierFile(imp), depth)) return '*';
      return undefined;
    }
    for (const named of imp.getNamedImports()) {
      const localName = named.getAliasNode()?.getText() ?? named.getName();
      if (localName !== local) continue;
      if (fromLibrary) return named.getName();
      const target = specifierFile(imp);
      return target ? reExportedName(target, named.getName(), depth + 1) : undefined;
    }
  }
  // CommonJS: const pd = require('plumber-data'); const { from, map: m } = require('plumber-data').
  for (const decl of file.getVariableDeclarations()) {
    const init = decl.getInitializer();
    if (!init || !Node.isCallExpression(init) || init.getExpression().getText() !== 'require') continue;
    const arg = init.getArguments()[0];
    if (!arg || !Node.isStringLiteral(arg) || arg.getLiteralValue() !== LIBRARY) continue;
    const nameNode = decl.getNameNode();
    if (Node.isIdentifier(nameNode) && nameNode.getText() === local) return '*';
    if (Node.isObjectBindingPattern(nameNode)) {
      for (const el of nameNode.getElements()) {
        if (el.getName() === local) return el.getPropertyNameNode()?.getText() ?? el.getName();
      }
    }
  }
  return undefined;
}

/** The library export a barrel file re-exports under `exported`, if any. */
function reExportedName(barrel: SourceFile, exported: string, depth: number): string | undefined {
  for (const exp of barrel.getExportDeclarations()) {
    const spec = specifierOf(exp);
    if (spec === undefined) continue;
    const named = exp.getNamedExports();
    if (named.length === 0) {
      if (spec === LIBRARY) return exported;
      const next = specifierFile(exp);
      const found = next && depth < 3 ? reExportedName(next, exported, depth + 1) : undefined;
      if (found) return found;
      continue;
    }
    for (const n of named) {
      const as = n.getAliasNode()?.getText() ?? n.getName();
      if (as !== exported) continue;
      if (spec === LIBRARY) return n.getName();
      const next = specifierFile(exp);
      return next ? reExportedName(next, n.getName(), depth + 1) : undefined;
    }
  }
  return syntacticBinding(barrel, exported, depth + 1);
}

function barrelReExportsAll(barrel: SourceFile | undefined, depth: number): boolean {
  if (!barrel || depth > 3) return false;
  return barrel.getExportDeclarations().some((e) => {
    if (e.getNamedExports().length > 0 || e.getNamespaceExport()) return false;
    const spec = specifierOf(e);
    return spec === LIBRARY || barrelReExportsAll(specifierFile(e), depth + 1);
  });
}

/** True when the expression's type is plumber-data's `Dataset` (or a subclass declared by the library). */
export function hasDatasetType(node: Node): boolean {
  try {
    const symbol = node.getType().getSymbol() ?? node.getType().getAliasSymbol();
    if (!symbol) return false;
    const name = symbol.getName();
    if (name !== 'Dataset') return false;
    const decl = symbol.getDeclarations()[0];
    return decl ? isLibraryFile(decl.getSourceFile().getFilePath()) : false;
  } catch {
    return false;
  }
}
