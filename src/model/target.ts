/**
 * Plans for another machine (`--cores N`, `plumber.model.cores`): how the cores a plan is for
 * compare with this machine's cores, where verification runs it. Pure: the surfaces
 * word it with `targetWords` (src/shared/words.ts).
 */
import type { ModelOptions, Plan, PlanTarget } from '../shared/analysis';
import type { Profile } from '../shared/profile';
import { applyOverrides, configFromProfile } from './config';
import { measure } from './measure';
import { toOverrides } from './plan';

/**
 * The plan's target when `options.cores` names one; undefined otherwise (the plan is then for the
 * cores here). The threads are the worker threads of the plan's configuration (with what
 * verification dropped), at least one (the main thread): the model plans at most one worker per
 * core beside the main thread, so a plan whose workers fit in the cores here runs here as on the
 * target, and one with more workers than cores here runs starved.
 */
export function planTarget(profile: Profile, plan: Plan, options: ModelOptions = {}): PlanTarget | undefined {
  if (options.cores === undefined || !(options.cores > 0)) return undefined;
  const cores = plan.cores ?? Math.max(1, Math.floor(options.cores));
  // The machine's cores, not the share other work left free while the run measured: a machine
  // is labelled by what it has, and a plan for its own cores is not for another machine because
  // the moment was busy (the cores note says how busy).
  const hereCores = Math.max(1, profile.machine.cores);
  let workers = 0;
  try {
    const m = measure(profile, options.history);
    // The plan as the model proposed it for the target: with the changes verification dropped
    // (a starved run here may have measured them as no gain), since those too were for the target.
    const dropped = plan.verification?.dropped.map((d) => d.change) ?? [];
    const overrides = dropped.length > 0 ? toOverrides(m, [...plan.changes, ...dropped]) : plan.overrides;
    for (const c of Object.values(applyOverrides(m, configFromProfile(m), overrides))) if (c.placement === 'worker') workers += c.concurrency;
  } catch {
    // A profile the model cannot measure (a failed run) ran no plan: its target is all there is to say.
  }
  const threads = Math.max(1, workers);
  return { cores, hereCores, threads, verifiable: threads <= hereCores };
}
