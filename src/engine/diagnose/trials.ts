/**
 * The configurations verification measured: each by its key, in the order they first ran, and the
 * runs that measured them (the passes' own runs count). Verification runs go through `measure`,
 * which keeps the budget's account of what a run takes.
 */
import type { ModelOptions, Plan, PlanChange } from '../../shared/analysis';
import type { Overrides, Profile } from '../../shared/profile';
import { overridesFor, reshapedFor } from '../../model';
import { runCurve } from '../paired';
import { runSlices } from '../stats';
import { VerifyBudget, warmupElementsFor } from './budget';
import { alignedStart, canonical, keyOf, safePredict, shortName, unmeasured, type Config } from './config';
import { convertIn, overridesBeside } from './convert';
import { frozenWithoutReorder, reorderIn } from './reshape';
import type { DiagnoseInput, PassRun } from './input';

/** What verification is given: the diagnosis so far. */
export interface VerifyContext {
  input: DiagnoseInput;
  first: Profile;
  plan: Plan;
  options: ModelOptions;
  /** Every run of the diagnosis in order; verification appends its own. */
  profiles: Profile[];
  clock: () => number;
  /** The runs the passes took, with the overrides each was given. */
  passRuns: PassRun[];
  /** When the diagnosis started, on `clock`. */
  began: number;
  /** The last pass's run (`first` after one pass) and the history its plan was made with. */
  last: Profile;
  history: Profile[];
}

/** Plans with more changes than this are not searched for the part a pass ran (2^n subsets). */
const MATCH_MAX_CHANGES = 6;

export class Trials {
  /** The plan's changes. */
  readonly all: PlanChange[];
  /** Every configuration of the plan's changes looked at, by `keyOf` its changes. */
  readonly configs = new Map<string, Config>();
  /** The configurations that ran, in the order they first ran (as written first). */
  readonly order: Config[] = [];
  /**
   * Parts of the plan measured beside it: run by a pass (the first pass's plan, before a later
   * pass added to it; a cache run alone first) or left out in turn by verification.
   */
  readonly measuredParts = new Set<Config>();
  readonly asWritten: Config;
  readonly planned: Config;
  readonly budget: VerifyBudget;
  /** Runs recorded so far: the sequence number of the next one's curve. */
  private recorded = 0;

  constructor(readonly ctx: VerifyContext) {
    const { first, plan, passRuns } = ctx;
    this.all = plan.changes;
    this.asWritten = this.configOf([]);
    this.planned = this.configOf(this.all);
    this.budget = new VerifyBudget(ctx.input, ctx.clock, ctx.began, passRuns, first, this.asWritten);
    // The passes already measured as written and, in each later pass, a part of the plan or all
    // of it (the first pass's plan, before a later pass added to it): those runs are measured
    // configurations, so verification does not run them again and a part the passes measured
    // beside as written can be kept when the whole cannot be shown.
    this.record(this.asWritten, first);
    this.order.push(this.asWritten);
    for (const r of passRuns) {
      if (r.profile === first || r.profile.error) continue;
      const c = this.configRunning(r.overrides);
      if (!c || c === this.asWritten) continue;
      this.record(c, r.profile);
      if (!this.order.includes(c)) this.order.push(c);
      if (c !== this.planned) this.measuredParts.add(c);
    }
  }

  get first(): Profile {
    return this.ctx.first;
  }

  get cancelled(): boolean {
    return this.budget.cancelled;
  }

  /** The configuration of these changes of the plan, made (unmeasured, with the model's prediction) on first use. */
  configOf(changes: PlanChange[]): Config {
    const key = keyOf(changes);
    let c = this.configs.get(key);
    if (!c) {
      const { first, plan, options } = this.ctx;
      const overrides = overridesFor(first, changes, options);
      let predictedRate: number | undefined;
      if (changes.length === this.all.length) predictedRate = plan.predictedRate;
      else if (changes.length > 0) predictedRate = safePredict(reshapedFor(first, changes, options), overrides, options)?.rate;
      c = unmeasured(key, changes, overrides, predictedRate);
      this.configs.set(key, c);
    }
    return c;
  }

  /** Some run already measured a configuration with these overrides (and no conversion, which runs another program). */
  ran(overrides: Overrides): boolean {
    const wanted = canonical(overrides);
    return [...this.configs.values(), ...this.order].some((c) => c.runs > 0 && canonical(c.overrides) === wanted && !convertIn(c.changes) && !reorderIn(c.changes));
  }

  /** What a person calls a configuration: "as written", "the plan", a change's name, "the plan without …". */
  name(c: Config): string {
    if (c === this.asWritten) return 'as written';
    if (c === this.planned) return 'the plan';
    if (c.changes.length === 1) return shortName(c.changes[0]!, this.first);
    const missing = this.all.filter((x) => !c.changes.includes(x));
    return missing.length === 1 ? `the plan without ${shortName(missing[0]!, this.first)}` : `${c.changes.length} of the plan's changes`;
  }

  /**
   * Measures one run of `c`; false when it did not measure (cancelled, or the run failed). After a
   * run of `partner` (a run as written beside the plan's), its window starts where partner's did
   * (`alignedStart`) and lasts as long as the budget allows it to cover partner's elements.
   */
  async measure(c: Config, what: string, partner?: Config): Promise<boolean> {
    const { input, first, profiles, clock } = this.ctx;
    if (input.signal?.aborted) {
      this.budget.cancelled = true;
      return false;
    }
    // A cache the plan's reorder frees from a random op above it is never run without the reorder.
    if (frozenWithoutReorder(c.changes, first, this.ctx.options.randomOps ?? [])) return false;
    input.onStep?.({ phase: 'verify', message: `verifying: ${what}`, run: profiles.length + 1 });
    const seconds = this.budget.windowSeconds(c, partner);
    const t0 = clock();
    const warmupElements = Math.max(warmupElementsFor(first, c.overrides) ?? 0, alignedStart(c, partner)) || undefined;
    const convert = convertIn(c.changes);
    const overrides = convert ? overridesBeside(convert, c.overrides) : c.overrides;
    const reorder = reorderIn(c.changes);
    const p = await input.run(overrides, 'verify', { seconds, ...(warmupElements ? { warmupElements } : {}), ...(convert ? { convert } : {}), ...(reorder ? { reorder } : {}) });
    this.budget.ran(t0, p.error ? undefined : p.run.seconds);
    profiles.push(p);
    if (!this.order.includes(c)) this.order.push(c);
    if (p.error) {
      c.runs++;
      if (p.error.kind === 'cancelled') this.budget.cancelled = true;
      c.error ??= p.error;
      return false;
    }
    this.record(c, p);
    return true;
  }

  /** The configuration of the plan's changes that these overrides run, if any (a plan has a handful of changes). */
  private configRunning(overrides: Overrides): Config | undefined {
    const { first, options } = this.ctx;
    const wanted = canonical(overrides);
    // A pass never runs a conversion: its runs stand only for configurations without one.
    if (canonical(this.planned.overrides) === wanted && !convertIn(this.all) && !reorderIn(this.all)) return this.planned;
    if (this.all.length > MATCH_MAX_CHANGES) return undefined;
    for (let mask = 1; mask < (1 << this.all.length) - 1; mask++) {
      const changes = this.all.filter((_, i) => mask & (1 << i));
      if (convertIn(changes) || reorderIn(changes)) continue;
      if (canonical(overridesFor(first, changes, options)) === wanted) return this.configOf(changes);
    }
    return undefined;
  }

  private record(c: Config, p: Profile): void {
    c.runs++;
    c.last = p;
    const curve = runCurve(p);
    if (curve) c.curves.push({ curve, seq: this.recorded });
    this.recorded++;
    c.slices.push(...runSlices(p));
    if (p.run.availableCores !== undefined) c.freeCores.push(p.run.availableCores);
    if (p.run.firstElementSeconds !== undefined) c.firstBatch.push(p.run.firstElementSeconds);
  }
}
