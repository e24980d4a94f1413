// The ES module entry: the CommonJS build re-exported, so `import` and `require` share one copy of
// the library (one seed, one set of tracing hooks, one `Dataset` class for `instanceof`). Node
// finds the CommonJS build's named exports from the list esbuild writes at its end.
export * from '../dist/index.js';
export { default } from '../dist/index.js';
