/**
 * The runner's tracer: installed at `globalThis[TRACER_KEY]` before the pipeline module loads, it
 * hands each operator a counters object, remembers what it was told, and turns both into the
 * profile's `ops` (with the warm-up subtracted).
 */
import type { OpCounters, OpInfo, Tracer } from '../data/tracing';
import { newCounters } from '../data/tracing';
import type { OpProfile } from '../shared/profile';
import { opIdOfSite } from '../shared/opId';

/** Counters that are high-water marks rather than sums: the window keeps the run's maximum. */
const MAX_COUNTERS = new Set<keyof OpCounters>(['bufferHighWater', 'inFlightHighWater']);

interface Entry {
  info: OpInfo;
  counters: OpCounters;
}

export class RunnerTracer implements Tracer {
  private readonly entries = new Map<string, Entry>();
  private baseline = new Map<string, OpCounters>();

  register(info: OpInfo): OpCounters {
    const known = this.entries.get(info.key);
    if (known) return known.counters;
    const entry: Entry = { info, counters: newCounters() };
    this.entries.set(info.key, entry);
    return entry.counters;
  }

  /** The operators registered so far. */
  infos(): OpInfo[] {
    return [...this.entries.values()].map((e) => e.info);
  }

  /** Starts the measured window: later `ops()` report counters minus their values now. */
  snapshot(): void {
    this.baseline = new Map([...this.entries].map(([k, e]) => [k, { ...e.counters }]));
  }

  /** Sum of a counter over every operator, in the measured window. */
  total(name: keyof OpCounters): number {
    let sum = 0;
    for (const [key, e] of this.entries) sum += e.counters[name] - (this.baseline.get(key)?.[name] ?? 0);
    return sum;
  }

  /**
   * The operators as the profile records them. `fnModules` maps user functions to where the
   * pipeline module exports them, so a main-thread map can be proposed for worker threads.
   */
  ops(pipelineFile: string, fnModules: Map<Function, { file: string; exportName: string }>): OpProfile[] {
    const ids = this.assignIds(pipelineFile);
    const out: OpProfile[] = [];
    for (const [key, { info, counters }] of this.entries) {
      const base = this.baseline.get(key);
      const window = newCounters();
      for (const name of Object.keys(window) as (keyof OpCounters)[]) {
        window[name] = MAX_COUNTERS.has(name) || !base ? counters[name] : counters[name] - base[name];
      }
      const fnModule = info.fnModule ?? (info.fn ? fnModules.get(info.fn) : undefined);
      const op: OpProfile = {
        id: ids.get(key) ?? key,
        kind: info.kind,
        inputs: info.inputs.map((k) => ids.get(k) ?? k),
        placement: info.placement,
        knobs: { ...info.knobs },
        random: info.random,
        counters: window,
      };
      if (info.site) op.site = { ...info.site };
      if (info.fnName !== undefined) op.fnName = info.fnName;
      if (info.fnAsync !== undefined) op.fnAsync = info.fnAsync;
      if (fnModule) op.fnModule = { ...fnModule };
      // JSON has no Infinity: an endless operator's cardinality is left out (its knobs say `count: -1`).
      if (info.cardinality !== undefined && Number.isFinite(info.cardinality)) op.cardinality = info.cardinality;
      if (info.overridden) op.overridden = true;
      out.push(op);
    }
    return out;
  }

  /** Op id of a library key (see `OpProfile.id`). */
  idOf(key: string, pipelineFile: string): string {
    return this.assignIds(pipelineFile).get(key) ?? key;
  }

  private assignIds(pipelineFile: string): Map<string, string> {
    const ids = new Map<string, string>();
    const perKind = new Map<string, number>();
    for (const [key, { info }] of this.entries) {
      if (info.site) {
        ids.set(key, opIdOfSite(info.site, pipelineFile));
      } else {
        const n = perKind.get(info.kind) ?? 0;
        perKind.set(info.kind, n + 1);
        ids.set(key, `${info.kind}#${n}`);
      }
    }
    return ids;
  }
}
