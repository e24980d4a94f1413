/**
 * Overrides checked against what the pipeline loaded, before anything runs: the modules and
 * exports they name exist, and a fn moved to worker threads can be found there.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { siteKey } from '../data/tracing';
import { exportedFunction, exportedFunctions, importModule } from './discover';
import type { ModuleNamespace } from './discover';
import { siteKeyOfOpId } from './overrides';
import type { RunRequest } from './request';
import type { RunnerTracer } from './tracer';

/**
 * Checks that the modules and export names of the overrides exist before anything runs: a worker
 * that looked up `constructor` would run `Object` on every element and say nothing. Returns a
 * sentence describing the first problem.
 */
export async function checkOverrideTargets(req: RunRequest, file: string, ns: ModuleNamespace): Promise<string | undefined> {
  for (const [id, o] of Object.entries(req.overrides)) {
    if (o.module === undefined && o.exportName === undefined) continue;
    const moduleFile = o.module === undefined ? file : o.module.startsWith('file:') ? fileURLToPath(o.module) : path.resolve(o.module);
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(moduleFile);
    } catch {
      return `Override for ${id}: the module ${moduleFile} does not exist.`;
    }
    if (!stat.isFile()) return `Override for ${id}: the module ${moduleFile} is not a file.`;
    if (o.exportName === undefined) continue;
    let mod: ModuleNamespace;
    try {
      mod = moduleFile === file ? ns : await importModule(moduleFile);
    } catch (e) {
      return `Override for ${id}: the module ${moduleFile} cannot be loaded: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (!exportedFunction(mod, o.exportName)) {
      const fns = [...exportedFunctions(mod, moduleFile).values()].filter((f) => f.file === moduleFile).map((f) => f.exportName);
      return `Override for ${id}: ${moduleFile} exports no function named "${o.exportName}".${fns.length > 0 ? ` Its exported functions: ${fns.join(', ')}.` : ' It exports no function.'}`;
    }
  }
  return undefined;
}

/**
 * An override that moves a fn to worker threads without naming its module runs the fn from the
 * pipeline's own file (./overrides.ts `toSiteMap`). When the fn is exported from another file (a
 * transforms module the pipeline imports), every worker would fail on its first task with "no
 * exported function": say which module does export it, and how to name it, before running.
 */
export function workerModuleProblem(req: RunRequest, file: string, tracer: RunnerTracer, ns: ModuleNamespace, fnModules: ReturnType<typeof exportedFunctions>): string | undefined {
  const wanted = Object.entries(req.overrides).filter(([, o]) => o.placement === 'worker' && o.module === undefined);
  for (const [id, o] of wanted) {
    const key = siteKeyOfOpId(id, file);
    const info = tracer.infos().find((i) => i.site !== undefined && siteKey(i.site) === key);
    if (!info?.fn) continue;
    const exportName = o.exportName ?? info.fnName ?? info.fn.name;
    if (exportName && exportedFunction(ns, exportName) === info.fn) continue;
    const home = fnModules.get(info.fn);
    const name = info.fnName || info.fn.name || 'its fn';
    if (home) {
      // Absolute: the runner's working directory is the pipeline's, not the user's.
      const flags = [...(home.file !== file ? [`--override ${id}=module:${home.file}`] : []), ...(home.exportName !== exportName ? [`--override ${id}=exportName:${home.exportName}`] : [])];
      const where = home.file !== file ? `${path.basename(file)} does not: ${home.file} does` : `${path.basename(file)} exports it as ${home.exportName}`;
      return `Override for ${id}: placement:worker runs ${name} from the module that exports it, and ${where}. Add ${flags.join(' ')}.`;
    }
    return `Override for ${id}: placement:worker runs ${name} from the module that exports it, and no module the pipeline loaded exports it. Export ${name} (an exported function worker threads can import), or name its module with --override ${id}=module:FILE.`;
  }
  return undefined;
}
