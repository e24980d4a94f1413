/**
 * Snapshot test of the TextMate grammar for Plumber's CLI output, tokenized with the same engine
 * VS Code uses (vscode-textmate + the oniguruma wasm). Regenerate after an intended change with
 * `UPDATE_SNAPSHOTS=1 npx mocha test/unit/client/grammar.test.ts` and review the diff.
 */
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import * as oniguruma from 'vscode-oniguruma';
import * as textmate from 'vscode-textmate';

const ROOT = join(__dirname, '../../..');
const FIXTURES = join(__dirname, 'fixtures');
const require_ = createRequire(__filename);

async function loadGrammar(): Promise<textmate.IGrammar> {
  const wasm = readFileSync(require_.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer);
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName !== 'text.plumber-output') return null;
      const path = join(ROOT, 'syntaxes/plumber-output.tmLanguage.json');
      return textmate.parseRawGrammar(readFileSync(path, 'utf8'), path);
    },
  });
  const grammar = await registry.loadGrammar('text.plumber-output');
  if (!grammar) throw new Error('the grammar did not load');
  return grammar;
}

/** One line per token that carries a Plumber scope: `line:col "text" scope scope…`. */
function tokenize(grammar: textmate.IGrammar, text: string): string[] {
  const out: string[] = [];
  let state = textmate.INITIAL;
  text.split('\n').forEach((line, i) => {
    const r = grammar.tokenizeLine(line, state);
    for (const t of r.tokens) {
      const scopes = t.scopes.filter((s) => s !== 'text.plumber-output');
      if (scopes.length === 0) continue;
      out.push(`${i + 1}:${t.startIndex + 1} ${JSON.stringify(line.slice(t.startIndex, t.endIndex))} ${scopes.join(' ')}`);
    }
    state = r.ruleStack;
  });
  return out;
}

function scopesOf(tokens: string[], text: string): string[] {
  return tokens.filter((t) => t.includes(` ${JSON.stringify(text)} `)).map((t) => t.slice(t.lastIndexOf('" ') + 2));
}

describe('The Plumber output grammar', () => {
  let grammar: textmate.IGrammar;
  before(async () => {
    grammar = await loadGrammar();
  });

  for (const name of ['plan', 'profile', 'cli-plan']) {
    it(`tokenizes ${name}.txt as in its snapshot`, () => {
      const tokens = tokenize(grammar, readFileSync(join(FIXTURES, `${name}.txt`), 'utf8'));
      const snapshot = join(FIXTURES, `${name}.tokens.txt`);
      if (process.env.UPDATE_SNAPSHOTS || !existsSync(snapshot)) writeFileSync(snapshot, tokens.join('\n') + '\n');
      assert.deepEqual(tokens, readFileSync(snapshot, 'utf8').trimEnd().split('\n'));
    });
  }

  it('marks the bottleneck, rates, ids and the pipeline name with their own scopes', () => {
    const tokens = tokenize(grammar, readFileSync(join(FIXTURES, 'plan.txt'), 'utf8'));
    assert.ok(scopesOf(tokens, '◀ bottleneck').some((s) => s.includes('invalid.illegal.bottleneck')));
    assert.ok(scopesOf(tokens, '431/s').some((s) => s.includes('constant.numeric.rate')));
    assert.ok(scopesOf(tokens, '16:4').some((s) => s.includes('constant.other.op-id')));
    assert.ok(scopesOf(tokens, 'records').some((s) => s.includes('entity.name.function.pipeline')));
    assert.ok(scopesOf(tokens, 'map').some((s) => s.includes('support.function.operator')));
    assert.ok(scopesOf(tokens, 'Bottleneck').some((s) => s.includes('keyword.other.label')));
    assert.ok(scopesOf(tokens, '14.9×').some((s) => s.includes('constant.numeric.speedup')));
  });

  it('reads the real CLI output: progress phases, bare operators and the bottleneck', () => {
    const tokens = tokenize(grammar, readFileSync(join(FIXTURES, 'cli-plan.txt'), 'utf8'));
    assert.ok(scopesOf(tokens, 'measuring').some((s) => s.includes('keyword.other.phase')));
    assert.ok(scopesOf(tokens, 'range').some((s) => s.includes('support.function.operator')));
    assert.ok(scopesOf(tokens, '◀ bottleneck').some((s) => s.includes('invalid.illegal.bottleneck')));
  });

  it('is the grammar package.json contributes for the plumber-output language', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { contributes: { grammars: Array<{ language: string; scopeName: string; path: string }> } };
    const g = pkg.contributes.grammars.find((x) => x.language === 'plumber-output');
    assert.ok(g);
    assert.equal(g.scopeName, 'text.plumber-output');
    assert.ok(existsSync(join(ROOT, g.path)));
  });
});
