/**
 * Loading the user's module and finding its pipelines: exported datasets and exported
 * zero-argument functions (sync or async) that return one. Datasets are recognised by the
 * `plumber-data.key` symbol rather than by class, because the user's copy of plumber-data may not
 * be the runner's. A pipeline of another dialect (a tfjs-data `Dataset`, a Node `Readable`, an
 * async generator's output or any async iterable) is seen through its dialect's root (dialects/).
 */
import { register } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { DATASET_KEY } from '../data/tracing';
import { dialectRoot } from './dialects';

/** A dataset as the runner sees it: async iterable and tagged with its root operator's key. */
export interface DatasetLike extends AsyncIterable<unknown> {
  [DATASET_KEY]: string;
}

export type ModuleNamespace = Record<string, unknown>;

export function isDataset(value: unknown): value is DatasetLike {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && DATASET_KEY in value;
}

function isZeroArgFunction(value: unknown): value is () => unknown {
  if (typeof value !== 'function' || value.length !== 0) return false;
  // Classes are functions too, but calling one without `new` throws.
  return !/^class[\s{]/.test(Function.prototype.toString.call(value));
}

/** Imports the module with the loader hooks (tsx) the process was started with. */
export async function importModule(file: string): Promise<ModuleNamespace> {
  return (await import(pathToFileURL(file).href)) as ModuleNamespace;
}

/**
 * The module's exports by name. When the module is CommonJS (tsx compiles `.ts` files to CommonJS
 * in a `"type": "commonjs"` package), Node's namespace may show only `default` (the exports
 * object), so that object's properties are read too; its own `default` property is the ES default
 * export. A value exported under two names is listed once, under its own name rather than
 * `default`.
 */
function exportsOf(ns: ModuleNamespace): [string, unknown][] {
  const byName = new Map<string, unknown>();
  for (const [name, value] of Object.entries(ns)) if (name !== 'module.exports' && name !== 'default') byName.set(name, value);
  const dflt = ns.default;
  if (typeof dflt === 'object' && dflt !== null && !isDataset(dflt)) {
    for (const [name, value] of Object.entries(dflt)) if (name !== '__esModule' && !byName.has(name)) byName.set(name, value);
  } else if (dflt !== undefined) {
    byName.set('default', dflt);
  }
  const dflt2 = byName.get('default');
  if (dflt2 !== undefined && [...byName].some(([name, v]) => name !== 'default' && v === dflt2)) byName.delete('default');
  return [...byName];
}

/** The value as a pipeline the runner can pull: a plumber-data dataset as it is, another dialect's through its root. */
function asPipeline(value: unknown, name: string): DatasetLike | undefined {
  return isDataset(value) ? value : dialectRoot(value, name);
}

/** A pipeline found in the module. */
export interface FoundPipeline {
  name: string;
  /** Builds (or returns) the dataset. */
  get(): Promise<DatasetLike>;
}

/**
 * Finds the pipelines a module exports. Zero-argument functions are called once to see whether
 * they return a dataset; `notPipelines` collects the other exports, for error messages.
 */
export async function findPipelines(ns: ModuleNamespace): Promise<{ pipelines: FoundPipeline[]; others: string[] }> {
  const pipelines: FoundPipeline[] = [];
  const others: string[] = [];
  for (const [name, value] of exportsOf(ns)) {
    const root = asPipeline(value, name);
    if (root !== undefined) {
      pipelines.push({ name, get: async () => root });
    } else if (isZeroArgFunction(value)) {
      let result: unknown;
      try {
        result = await value();
      } catch {
        // A function that throws when called without arguments is not a pipeline factory.
        others.push(name);
        continue;
      }
      const built = asPipeline(result, name);
      if (built !== undefined) {
        let first: DatasetLike | undefined = built;
        // The first call's dataset is reused so a factory runs once per profile.
        pipelines.push({
          name,
          get: async () => {
            if (first) {
              const d = first;
              first = undefined;
              return d;
            }
            const again = asPipeline(await value(), name);
            if (again === undefined) throw new Error(`${name}() returned a dataset once and then something else.`);
            return again;
          },
        });
      } else {
        others.push(name);
      }
    } else {
      others.push(name);
    }
  }
  return { pipelines, others };
}

/**
 * Maps each exported function to where it is exported, so the profile can say which operator fns
 * could run in worker threads. The pipeline module's own exports come first; then every other
 * user module already loaded: as CommonJS (tsx compiles `.ts` files in a `"type": "commonjs"`
 * package to CommonJS), from `require.cache`, and as ES modules (a `"type": "module"` package,
 * `.mjs`), the namespaces `loadedEsModules` found — because transforms usually live in a module of
 * their own (`import { decode } from './transforms'`). Nothing is imported or run again here, and
 * packages under node_modules are skipped.
 */
export function exportedFunctions(ns: ModuleNamespace, file: string, esModules: ReadonlyArray<readonly [file: string, ns: ModuleNamespace]> = []): Map<Function, { file: string; exportName: string }> {
  const map = new Map<Function, { file: string; exportName: string }>();
  const add = (exportsByName: Iterable<[string, unknown]>, from: string): void => {
    for (const [name, value] of exportsByName) {
      if (typeof value === 'function' && name !== 'default' && !map.has(value)) map.set(value, { file: from, exportName: name });
    }
  };
  add(exportsOf(ns), file);
  for (const [filename, mod] of Object.entries(require.cache)) {
    if (!mod || filename === file || /[\\/]node_modules[\\/]/.test(filename) || filename === __filename) continue;
    const exported: unknown = mod.exports;
    if (typeof exported !== 'object' || exported === null) continue;
    add(Object.entries(exported as Record<string, unknown>), filename);
  }
  for (const [filename, mod] of esModules) if (filename !== file) add(exportsOf(mod), filename);
  return map;
}

/**
 * A loader hook that reports the file URL of every module the process loads (outside
 * node_modules) on a message port. Registered after tsx's, it runs first and sees the URL tsx
 * resolved. Nothing lists the ES modules a process loaded the way `require.cache` lists CommonJS
 * ones, and `load` (not `resolve`) runs only for modules that are actually loaded.
 */
const LOAD_LOG_HOOKS = `let port;
export function initialize(data) { port = data.port; }
export async function load(url, context, next) {
  const result = await next(url, context);
  if (port && url.startsWith('file:') && !/[\\\\/]node_modules[\\\\/]/.test(url)) port.postMessage(url);
  return result;
}`;

let loadLog: Set<string> | undefined;

/**
 * Starts logging the modules the process loads from now on (once per process; the runner calls it
 * before importing the user's module). Where loader hooks cannot be registered, nothing is logged
 * and only CommonJS modules are found, as before.
 */
export function logLoadedModules(): void {
  if (loadLog) return;
  loadLog = new Set();
  const urls = loadLog;
  try {
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (url: unknown) => {
      if (typeof url === 'string') urls.add(url);
    });
    port1.unref();
    register(`data:text/javascript,${encodeURIComponent(LOAD_LOG_HOOKS)}`, { data: { port: port2 }, transferList: [port2] });
  } catch {
    // Node without module.register: CommonJS modules only.
  }
}

/**
 * The namespaces of the ES modules the log saw loaded, but the pipeline's own file: importing a
 * loaded module again returns the instance already evaluated (the module map is keyed by URL), so
 * its functions are the very ones the pipeline holds and nothing runs again. A module that fails
 * to import is skipped.
 */
export async function loadedEsModules(file: string): Promise<Array<[file: string, ns: ModuleNamespace]>> {
  if (!loadLog) return [];
  // The hook thread posts each URL before the module it names is handed back: one turn of the
  // event loop delivers what is still queued.
  await new Promise((resolve) => setImmediate(resolve));
  const own = pathToFileURL(file).href;
  const out: Array<[string, ModuleNamespace]> = [];
  for (const url of loadLog) {
    if (url === own) continue;
    try {
      out.push([fileURLToPath(url), (await import(url)) as ModuleNamespace]);
    } catch {
      // Not importable on its own (a module that failed to load): its fns stay unmovable.
    }
  }
  return out;
}

/**
 * The function the module exports under `name`, read from its own exports only: a name that
 * only an object's prototype has (`constructor`, `toString`) is not an export.
 */
export function exportedFunction(ns: ModuleNamespace, name: string): Function | undefined {
  const value = new Map(exportsOf(ns)).get(name);
  return typeof value === 'function' ? value : undefined;
}
