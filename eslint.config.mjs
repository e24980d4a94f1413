// ESLint (flat config): the layer rules of ARCHITECTURE.md as import rules, the size bars, and
// promises that nobody awaits. `npm run lint`; `npm test` runs it before mocha, so CI does too.
// (Import cycles are found by test/unit/lint/cycles.test.ts.)
//
// Each folder gets ONE `@typescript-eslint/no-restricted-imports` entry that holds every rule that
// applies to it: in a flat config a later block replaces a rule's options rather than adding to
// them, so the restrictions are composed here in code and not spread over overlapping blocks.
// Relative imports are matched as written, so each folder's rules are made once per depth below
// src/ (`../engine` from src/cli/x.ts is `../../engine` from src/cli/sub/x.ts).
import tseslint from 'typescript-eslint';

/** Only the client talks to VS Code: everything else must run in a plain Node process. */
const VSCODE = { name: 'vscode', message: 'Only src/client imports vscode; the other layers run outside VS Code.' };
/** ts-morph (a TypeScript compiler) is heavy: only the graph extraction loads it. */
const TS_MORPH = { name: 'ts-morph', message: 'ts-morph is only used under src/engine/graph; ask the graph for what you need.' };

/** The start of a relative import that climbs `depth` folders, from a file that far below src/ to src/. */
function up(depth) {
  return `^(\\.\\./){${depth}}`;
}

/** A pattern that forbids relative imports from `depth` folders below src/ into one of `layers`. */
function into(depth, layers, message) {
  return { regex: `${up(depth)}(${layers.join('|')})(/|$)`, message };
}

/** The restrictions of one folder, as one rule entry. */
function restrict(files, { paths = [], patterns = [] }) {
  return { files, rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns }] } };
}

/**
 * The restrictions of `folder` (below src/) for its files at every depth, one entry per depth:
 * `patterns(depth)` builds the patterns for a file `depth` folders below src/.
 */
function layer(folder, { paths = [], patterns = () => [] }) {
  const base = folder.split('/').length;
  return [0, 1, 2, 3].map((extra) => restrict([`src/${folder}/${'*/'.repeat(extra)}*.ts`], { paths, patterns: patterns(base + extra) }));
}

const DATA = 'src/data (plumber-data) is a published library: it imports nothing from the rest of src.';
const SHARED = 'src/shared is the contract between layers: it imports none of them (only `import type` from plumber-data).';
const RUNNER = "src/runner imports only src/shared and plumber-data's tracing contract (src/data/tracing or the package), never its internals, the model or the engine.";
const ENGINE = 'src/engine is below every surface: it imports no server, CLI or client.';
const SURFACES = 'The server and the CLI are two surfaces over the engine: neither imports the other.';
const BENCH = 'A benchmark calls the engine (or the runner, model, shared, data), never a surface: src/cli, src/server, src/client.';

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '**/dist/**', 'out/**', 'artifacts/**', '.vscode-e2e/**', '.vscode-test/**', 'test/fixtures/**', 'examples/*/data/**'],
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits loses its rejection (an unhandled rejection, or nothing at all) and
      // its ordering: `void p` says the fire-and-forget is deliberate.
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },

  // The size bars: a file past 600 lines, or a function past 150, has rooms waiting to be made.
  {
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 600, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 150, skipBlankLines: false, skipComments: false, IIFEs: true }],
    },
  },

  // Layer rules. No layer but the client imports vscode, and ts-morph stays in src/engine/graph.
  restrict(['src/**/*.ts'], { paths: [VSCODE, TS_MORPH] }),
  restrict(['src/client/**/*.ts'], { paths: [TS_MORPH] }),
  // plumber-data: nothing outside its own folder.
  ...layer('data', { paths: [VSCODE, TS_MORPH], patterns: (depth) => [{ regex: up(depth), message: DATA }] }),
  // The shared contract sits below every layer that uses it; it may name plumber-data's types.
  ...layer('shared', {
    paths: [VSCODE, TS_MORPH, { name: 'plumber-data', allowTypeImports: true, message: SHARED }],
    // One pattern that allows a type import lets it pass every pattern, so the one that admits
    // plumber-data's types leaves its internals out, and a second refuses those.
    patterns: (depth) => [into(depth, ['engine', 'server', 'client', 'cli', 'runner', 'model', 'data/internal'], SHARED), { regex: `${up(depth)}data(?!/internal(/|$))(/|$)`, allowTypeImports: true, message: SHARED }],
  }),
  // The model is pure: no I/O, no Node built-ins, no packages; only its own files and src/shared.
  restrict(['src/model/**/*.ts'], {
    patterns: [{ regex: '^(?!\\./|\\.\\./shared(/|$))', message: 'src/model is pure: it imports only its own files and src/shared (no node:, no packages, no other layer).' }],
  }),
  // The runner loads the user's pipeline beside the user's own plumber-data: it meets the library
  // only through the tracing contract, and plans nothing itself.
  ...layer('runner', {
    paths: [VSCODE, TS_MORPH],
    patterns: (depth) => [{ regex: `${up(depth)}(?!shared(/|$)|data(/tracing|/index)?$)`, message: RUNNER }],
  }),
  // The engine is what every surface shares.
  ...layer('engine', { paths: [VSCODE, TS_MORPH], patterns: (depth) => [into(depth, ['server', 'cli', 'client'], ENGINE)] }),
  ...layer('engine/graph', { paths: [VSCODE], patterns: (depth) => [into(depth, ['server', 'cli', 'client'], ENGINE)] }),
  ...layer('server', { paths: [VSCODE, TS_MORPH], patterns: (depth) => [into(depth, ['cli'], SURFACES)] }),
  ...layer('cli', { paths: [VSCODE, TS_MORPH], patterns: (depth) => [into(depth, ['server'], SURFACES)] }),
  // Benchmarks measure the engine as every surface calls it, from outside src/.
  restrict(['bench/**/*.ts'], { patterns: [{ regex: '^(\\.\\./)+src/(cli|server|client)(/|$)', message: BENCH }] }),
);
