// The ES module entry's types: those of the CommonJS build it re-exports (index.mjs).
export * from '../dist/index.js';
export { default } from '../dist/index.js';
