/**
 * Hand-made profiles, analyses and plans for feature tests: numbers a person can check, on the
 * operators of a real extracted pipeline (so ids join exactly as they would after a run).
 */
import { PROFILE_VERSION, type OpProfile, type Profile } from '../../../src/shared/profile';
import type { Analysis, Plan, PlanChange } from '../../../src/shared/analysis';
import { newCounters } from '../../../src/data/tracing';
import type { PipelineGraph } from '../../../src/engine/graph/types';

export interface Hand {
  profile: Profile;
  analysis: Analysis;
  plan: Plan;
}

/** A profile where every operator ran at `rate(op)` el/s for 2 s; the op labelled `bottleneck` is the bottleneck. */
export function handMade(p: PipelineGraph, bottleneck: string, changes: (id: (label: string) => string) => PlanChange[]): Hand {
  const id = (label: string): string => {
    const op = p.ops.find((o) => o.label === label);
    if (!op) throw new Error(`no ${label}`);
    return op.id;
  };
  const ops: OpProfile[] = p.ops.map((o, i) => ({
    id: o.id,
    kind: o.kind,
    inputs: o.inputs,
    ...(o.fn?.name ? { fnName: o.fn.name } : {}),
    placement: 'main',
    knobs: o.kind === 'batch' ? { batchSize: 8 } : {},
    random: o.random !== undefined,
    counters: { ...newCounters(), produced: 620 - i, pulled: 620, calls: 620, selfSeconds: o.label === bottleneck ? 1.22 : 0.05 },
  }));
  const profile: Profile = {
    version: PROFILE_VERSION,
    pipeline: { file: p.file, exportName: p.name, rootId: p.rootId },
    machine: { cores: 2, memoryTotalBytes: 8e9, memoryFreeBytes: 4e9, nodeVersion: 'v20.20.2', platform: 'linux', arch: 'x64', cpuModel: 'test', libuvThreads: 4, cpuClock: 'schedstat' },
    run: {
      startedAt: '2026-11-29T18:00:00.000Z',
      elements: 620,
      seconds: 2,
      warmupElements: 50,
      warmupSeconds: 0.5,
      converged: true,
      endReason: 'converged',
      rateEstimates: [300, 310],
      overrides: {},
      mainThreadCpuSeconds: 1.9,
      processCpuSeconds: 2,
      peakRssBytes: 1e8,
    },
    ops,
  };
  const bid = id(bottleneck);
  const analysis: Analysis = {
    measuredRate: 310,
    bound: 2100,
    bottleneck: { resource: 'main-thread', opId: bid, reason: `${bottleneck} runs on the main thread and needs 2 ms per element.` },
    bounds: [{ resource: 'sequential-op', opId: bid, rate: 2100, detail: `${bottleneck} used 1.22 s of main thread for 620 elements.` }],
    ops: p.ops.map((o) => ({
      opId: o.id,
      visitRatio: 1,
      measuredRate: o.label === bottleneck ? 1200 : 310,
      ratePerCore: 500,
      cpuPerRootElement: 0.002,
      cpuShare: o.label === bottleneck ? 0.61 : 0.05,
      mainThreadPerRootElement: 0.002,
      bound: o.label === bottleneck ? 2100 : 9000 + o.index,
      placement: 'main',
      isBottleneck: o.label === bottleneck,
    })),
    cores: 2,
  };
  const plan: Plan = {
    changes: changes(id),
    currentRate: 310,
    predictedRate: 2108,
    predictedBound: 2400,
    predictedBottleneck: { resource: 'cpu', reason: 'all cores busy' },
    overrides: {},
  };
  return { profile, analysis, plan };
}
