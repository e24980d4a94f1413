/**
 * Loading a CommonJS file past the TypeScript loader's hook, for the runner's own code and the
 * libraries it loads into a pipeline that did not load them itself.
 *
 * Rule: nothing of Plumber's own may change how fast the user's code runs. The loader (tsx) scans
 * every `.js` it loads that mentions `import` or `export` with a WebAssembly lexer, and a file of a
 * few tens of kB makes the lexer grow its memory. Growing a WebAssembly memory detaches its old
 * ArrayBuffer, and the first detach in a thread switches V8's optimised code in that thread to
 * checking every typed-array access for a detached buffer for the rest of its life: a spectrum loop
 * over Float64Arrays ran about 30% slower in the runner than in the user's own `tsx` process. The
 * user's files and their dependencies still go through the loader, as in their own `tsx` run.
 */
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';

type Loader = (m: { _compile(content: string, filename: string): unknown }, filename: string) => void;

/** Node's own way of loading a CommonJS `.js` file: read it, drop a byte-order mark, compile it. */
const plainJs: Loader = (m, filename) => {
  m._compile(readFileSync(filename, 'utf8').replace(/^\uFEFF/, ''), filename);
};

/**
 * The exports of the CommonJS file `file` (an absolute path), loaded by `require` with the `.js`
 * files it requires, as they load synchronously, compiled without the loader's hook. Cached as
 * `require` caches it, so a later `require` of it gets the same module. Only for CommonJS code.
 */
export function requireUnhooked(file: string): unknown {
  // Module._extensions is deprecated in name only: it is how every loader hooks CommonJS.
  const extensions = (Module as unknown as { _extensions: Record<string, Loader> })._extensions;
  const hooked = extensions['.js'];
  extensions['.js'] = plainJs;
  try {
    return createRequire(file)(file);
  } finally {
    if (hooked) extensions['.js'] = hooked;
  }
}
