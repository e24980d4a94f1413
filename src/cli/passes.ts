/** Planning in passes moved into the engine (src/engine/passes.ts); this name stays for old imports. */
export { planInPasses, type PlannedRun } from '../engine/passes';
