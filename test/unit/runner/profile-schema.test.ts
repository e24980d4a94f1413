import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as ts from 'typescript';
import schema from '../../../src/shared/profile.schema.json';
import { runProfile } from '../../../src/runner/spawn';

type Node = Record<string, unknown>;
const ROOT = path.resolve(__dirname, '../../..');
const defs = (schema as unknown as { $defs: Record<string, Node> }).$defs;

function resolve(node: Node): Node {
  const ref = node.$ref as string | undefined;
  return ref ? resolve(defs[ref.replace('#/$defs/', '')]) : node;
}

/** Compares a TypeScript type with a schema node, collecting every disagreement. */
function compare(checker: ts.TypeChecker, type: ts.Type, raw: Node, where: string, problems: string[]): void {
  const node = resolve(raw);
  const t = checker.getNonNullableType(type);
  const literals = (): string[] | undefined => {
    const parts = t.isUnion() ? t.types : [t];
    if (!parts.every((p) => p.isStringLiteral())) return undefined;
    return parts.map((p) => (p as ts.StringLiteralType).value).sort();
  };
  if (Array.isArray(node.enum)) {
    const lit = literals();
    if (!lit) problems.push(`${where}: schema has an enum but the type is ${checker.typeToString(t)}`);
    else if (JSON.stringify(lit) !== JSON.stringify([...(node.enum as string[])].sort())) problems.push(`${where}: enum ${JSON.stringify(node.enum)} vs type ${lit.join('|')}`);
    return;
  }
  if (node.oneOf || node.const !== undefined) return;
  const flags = t.flags;
  switch (node.type) {
    case 'string':
      if (!(flags & ts.TypeFlags.StringLike)) problems.push(`${where}: schema says string, type is ${checker.typeToString(t)}`);
      return;
    case 'number':
    case 'integer':
      if (!(flags & ts.TypeFlags.NumberLike)) problems.push(`${where}: schema says number, type is ${checker.typeToString(t)}`);
      return;
    case 'boolean':
      if (!(flags & ts.TypeFlags.BooleanLike)) problems.push(`${where}: schema says boolean, type is ${checker.typeToString(t)}`);
      return;
    case 'array': {
      if (!checker.isArrayType(t)) return void problems.push(`${where}: schema says array, type is ${checker.typeToString(t)}`);
      const [element] = checker.getTypeArguments(t as ts.TypeReference);
      compare(checker, element, node.items as Node, `${where}[]`, problems);
      return;
    }
    case 'object': {
      if (node.properties) {
        const props = checker.getPropertiesOfType(t).filter((p) => !(p.flags & ts.SymbolFlags.Method));
        const names = props.map((p) => p.name).sort();
        const schemaNames = Object.keys(node.properties as Node).sort();
        if (JSON.stringify(names) !== JSON.stringify(schemaNames)) problems.push(`${where}: properties ${schemaNames.join(',')} vs type ${names.join(',')}`);
        const required = props
          .filter((p) => !(p.flags & ts.SymbolFlags.Optional))
          .map((p) => p.name)
          .sort();
        if (JSON.stringify(required) !== JSON.stringify([...(node.required as string[])].sort())) problems.push(`${where}: required ${JSON.stringify(node.required)} vs type ${required.join(',')}`);
        for (const p of props) {
          const sub = (node.properties as Record<string, Node>)[p.name];
          if (sub) compare(checker, checker.getTypeOfSymbol(p), sub, `${where}.${p.name}`, problems);
        }
      } else if (node.additionalProperties) {
        const index = checker.getIndexInfoOfType(t, ts.IndexKind.String);
        if (!index) problems.push(`${where}: schema is a map but the type has no string index`);
        else compare(checker, index.type, node.additionalProperties as Node, `${where}[key]`, problems);
      }
      return;
    }
    default:
      problems.push(`${where}: schema node without a type`);
  }
}

/** A small JSON Schema validator for the keywords profile.schema.json uses. */
function validate(value: unknown, raw: Node, where: string, problems: string[]): void {
  const node = resolve(raw);
  if (node.const !== undefined) {
    if (value !== node.const) problems.push(`${where}: expected ${JSON.stringify(node.const)}`);
    return;
  }
  if (Array.isArray(node.enum)) {
    if (!node.enum.includes(value)) problems.push(`${where}: ${JSON.stringify(value)} not in ${JSON.stringify(node.enum)}`);
    return;
  }
  if (Array.isArray(node.oneOf)) {
    const ok = (node.oneOf as Node[]).filter((n) => {
      const p: string[] = [];
      validate(value, n, where, p);
      return p.length === 0;
    });
    if (ok.length !== 1) problems.push(`${where}: matches ${ok.length} of oneOf`);
    return;
  }
  const type = node.type;
  const isObj = typeof value === 'object' && value !== null && !Array.isArray(value);
  if (type === 'string' && typeof value !== 'string') problems.push(`${where}: not a string`);
  if ((type === 'number' || type === 'integer') && (typeof value !== 'number' || !Number.isFinite(value))) problems.push(`${where}: not a finite number`);
  if (type === 'integer' && !Number.isInteger(value)) problems.push(`${where}: not an integer`);
  if (typeof node.minimum === 'number' && typeof value === 'number' && value < node.minimum) problems.push(`${where}: below ${node.minimum}`);
  if (typeof node.maximum === 'number' && typeof value === 'number' && value > node.maximum) problems.push(`${where}: above ${node.maximum}`);
  if (type === 'boolean' && typeof value !== 'boolean') problems.push(`${where}: not a boolean`);
  if (type === 'array') {
    if (!Array.isArray(value)) problems.push(`${where}: not an array`);
    else value.forEach((v, i) => validate(v, node.items as Node, `${where}[${i}]`, problems));
  }
  if (type === 'object') {
    if (!isObj) return void problems.push(`${where}: not an object`);
    const obj = value as Record<string, unknown>;
    for (const r of (node.required as string[] | undefined) ?? []) if (!(r in obj)) problems.push(`${where}: missing ${r}`);
    const props = node.properties as Record<string, Node> | undefined;
    for (const [k, v] of Object.entries(obj)) {
      if (props?.[k]) validate(v, props[k], `${where}.${k}`, problems);
      else if (typeof node.additionalProperties === 'object') validate(v, node.additionalProperties as Node, `${where}.${k}`, problems);
      else if (node.additionalProperties === false) problems.push(`${where}: unexpected property ${k}`);
    }
  }
}

describe('profile.schema.json', function () {
  this.timeout(30_000);

  it('describes exactly the types of src/shared/profile.ts', () => {
    const file = path.join(ROOT, 'src/shared/profile.ts');
    const program = ts.createProgram([file], { strict: true, module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16, target: ts.ScriptTarget.ES2022, noEmit: true });
    const checker = program.getTypeChecker();
    const source = program.getSourceFile(file)!;
    const moduleSymbol = checker.getSymbolAtLocation(source)!;
    const exported = new Map(checker.getExportsOfModule(moduleSymbol).map((s) => [s.name, s]));
    const typeOf = (name: string): ts.Type => {
      let sym = exported.get(name)!;
      if (sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
      return checker.getDeclaredTypeOfSymbol(sym);
    };
    const problems: string[] = [];
    compare(checker, typeOf('Profile'), schema as unknown as Node, 'Profile', problems);
    for (const name of Object.keys(defs)) compare(checker, typeOf(name), defs[name], name, problems);
    assert.deepEqual(problems, []);
  });

  it('accepts the profiles the runner writes, failed ones included', async () => {
    const ok = await runProfile({ file: path.join(ROOT, 'test/fixtures/pipelines/bad/two.ts'), exportName: 'first', seconds: 0.3, warmupSeconds: 0.1 });
    const failed = await runProfile({ file: path.join(ROOT, 'test/fixtures/pipelines/bad/throws.ts'), seconds: 0.3, warmupSeconds: 0.1 });
    // Window slices, cores free, calibration, move costs and observed randomness all present.
    const probed = await runProfile({ file: path.join(ROOT, 'test/fixtures/pipelines/probe-moves.ts'), seconds: 0.5, warmupSeconds: 0.1 });
    assert.ok(probed.ops.some((o) => o.moveCost !== undefined && o.randomObserved !== undefined));
    for (const profile of [ok, failed, probed]) {
      const problems: string[] = [];
      validate(JSON.parse(JSON.stringify(profile)), schema as unknown as Node, 'profile', problems);
      assert.deepEqual(problems, []);
    }
    assert.equal(failed.error?.kind, 'throw');
  });

  it('rejects a profile with a misspelt field', () => {
    const problems: string[] = [];
    validate({ version: 1, pipeline: { file: 'a', exportName: 'b', rootId: 'c' }, machine: {}, run: {}, ops: [], eror: {} }, schema as unknown as Node, 'profile', problems);
    assert.ok(problems.some((p) => p.includes('unexpected property eror')));
  });
});
