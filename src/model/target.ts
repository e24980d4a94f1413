/**
 * Plans for another machine (`--cores N`, `plumber.model.cores`): how the cores a plan is for
 * compare with the cores the pipeline gets here, where verification runs it. Pure: the surfaces
 * word it with `targetWords` (src/shared/words.ts).
 */
import type { ModelOptions, Plan, PlanTarget } from '../shared/analysis';
import type { Profile } from '../shared/profile';
import { applyOverrides, configFromProfile } from './config';
import { coresFor } from './cores';
import { measure } from './measure';

/**
 * The plan's target when `options.cores` names one; undefined otherwise (the plan is then for the
 * cores here). The cores here are those a plan without a target is made for (`coresFor`: the
 * measured free cores when the run measured them, else the machine's). The threads are the
 * worker threads of the plan's configuration, at least one (the main thread): the model plans at
 * most one worker per core beside the main thread, so a plan whose workers fit in the cores here
 * runs here as on the target, and one with more workers than cores here runs starved.
 */
export function planTarget(profile: Profile, plan: Plan, options: ModelOptions = {}): PlanTarget | undefined {
  if (options.cores === undefined || !(options.cores > 0)) return undefined;
  const cores = plan.cores ?? Math.max(1, Math.floor(options.cores));
  const hereCores = coresFor(profile, { ...options, cores: undefined }).cores;
  let workers = 0;
  try {
    const m = measure(profile, options.history);
    for (const c of Object.values(applyOverrides(m, configFromProfile(m), plan.overrides))) if (c.placement === 'worker') workers += c.concurrency;
  } catch {
    // A profile the model cannot measure (a failed run) ran no plan: its target is all there is to say.
  }
  const threads = Math.max(1, workers);
  return { cores, hereCores, threads, verifiable: threads <= hereCores };
}
