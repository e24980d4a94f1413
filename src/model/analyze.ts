/**
 * The analysis of a profile as it ran: per-operator numbers, every bound and the bottleneck.
 */
import type { Analysis, Bottleneck, OpAnalysis } from '../shared/analysis';
import type { MoveBlocked } from '../shared/profile';
import type { Config } from './config';
import { MODEL_CONSTANTS as C } from './constants';
import { dataflowWords } from './dataflow';
import { describeOp, formatRootRate, formatSeconds, perCallPhrase } from './describe';
import type { Evaluation } from './evaluation';
import { can, isFnOp } from './knobs';
import type { Measured, OpMeasure } from './measured';
import { readerPartsWords, readerWords } from './readers';

/** The op that uses the most of a per-element quantity, with its share of the total. */
function dominant(ev: Evaluation, pick: (id: string) => number): { id?: string; value: number; share: number } {
  let best: string | undefined;
  let bestValue = 0;
  let total = 0;
  for (const id of ev.eff.keys()) {
    const v = pick(id);
    total += v;
    if (v > bestValue) {
      best = id;
      bestValue = v;
    }
  }
  return { id: best, value: bestValue, share: total > 0 ? bestValue / total : 0 };
}

/**
 * Why the pipeline is slow: the binding bound, named after the operator that uses most of it, and
 * how the DAG shapes it (the mixture share its branch supplies, work a later shard throws away).
 */
export function bottleneckOf(m: Measured, ev: Evaluation, cfg?: Config): Bottleneck {
  const b = bindingBottleneck(m, ev);
  const reader = b.opId !== undefined ? m.ops.get(b.opId) : undefined;
  const readerLead = reader ? readerWords(reader, describeOp(reader.op), b.opId !== undefined ? cfg?.[b.opId] : undefined) : '';
  const more = b.opId !== undefined ? [readerLead, dataflowWords(m, b.opId, ev.binding.rate), flatMapWords(m, ev, b.opId), immovableWords(m, ev, b), oneAtATimeWords(m, b)].filter(Boolean).join(' ') : '';
  return more ? { ...b, reason: `${b.reason} ${more}` } : b;
}

/**
 * An operator that waits inside the datasets a flatMap's fn returns (shards read record by
 * record): flatMap reads them one after another, so no knob overlaps those waits, but an
 * interleave in its place reads several at once — how many the next bound says is worth it. The
 * change alters the order of the elements, so it is advice, not a plan change. Empty otherwise.
 */
function flatMapWords(m: Measured, ev: Evaluation, id: string): string {
  const om = m.ops.get(id);
  // An op that takes more calls in flight itself is the plan's to tune; an interleave is plumber-data's.
  if (!om || !om.isAsync || om.tunable || om.op.levers !== undefined) return '';
  let cur = om.op.parentId;
  for (let guard = 0; cur !== undefined && guard <= m.order.length; guard++) {
    const parent = m.ops.get(cur);
    if (!parent || parent.op.kind === 'interleave') return '';
    if (parent.op.kind === 'flatMap') {
      const next = ev.bounds.find((o) => o.opId !== id && o.rate > ev.binding.rate * (1 + 1e-9));
      const n = next && Number.isFinite(next.rate) ? Math.min(C.defaultMaxConcurrency, Math.max(2, Math.ceil(next.rate / ev.binding.rate))) : undefined;
      const lift = n !== undefined ? ` (cycleLength and parallelism ${n} would lift this bound to about ${formatRootRate(m, ev.binding.rate * n)})` : '';
      return `It waits inside the datasets ${describeOp(parent.op)} returns, which flatMap reads one after another, so nothing overlaps those waits: an interleave in its place reads several at once${lift}; its elements then alternate between the datasets instead of following one another.`;
    }
    cur = parent.op.parentId;
  }
  return '';
}

/**
 * Work that holds the main thread while other cores have room, but that worker threads cannot
 * run: a fn that is not an exported function of any module the pipeline imports (an inline
 * arrow, a module-private function), or a generator source that computes its elements itself.
 * Only the user can make it movable, so the bottleneck says how, and how fast all cores would
 * let it go. Empty otherwise.
 */
function immovableWords(m: Measured, ev: Evaluation, b: Bottleneck): string {
  if ((b.resource !== 'main-thread' && b.resource !== 'sequential-op') || b.opId === undefined) return '';
  const om = m.ops.get(b.opId);
  if (!om || om.movable || om.isAsync || om.op.placement !== 'main') return '';
  const cpu = ev.bounds.find((x) => x.resource === 'cpu');
  if (!cpu || !(cpu.rate > ev.binding.rate * (1 + C.minGain))) return '';
  const all = `all cores together allow about ${formatRootRate(m, cpu.rate)}`;
  if (!can(om.op, 'placement')) return inDialectWords(om, all, om.selfPerRoot > 0.5 * ev.mainPerRoot);
  const blocked = om.op.moveBlocked;
  if (blocked !== undefined && om.op.fnModule !== undefined) return `Worker threads could run it beside the main thread (${all}), but ${crossingWords(blocked)}.`;
  if (isFnOp(om.op) && om.op.fnModule === undefined && om.op.counters.calls > 0) {
    const named = om.op.fnName && /^[A-Za-z_$][\w$]*$/.test(om.op.fnName) ? om.op.fnName : undefined;
    if (named) return `Worker threads could run it beside the main thread (${all}), but ${named} is not exported, so they cannot load it: export it (\`export function ${named}\`) and the plan can move it.`;
    return `Worker threads could run it beside the main thread (${all}), but its fn is not an exported function, so they cannot load it: write it as an exported function (\`export function name(x) { … }\`, in this file or a module it imports) and pass it by name, and the plan can move it.`;
  }
  // A generator that computes each element itself: only a map's fn can move.
  if (om.op.kind === 'from' && om.op.inputs.length === 0 && om.selfPerRoot > 0.5 * ev.mainPerRoot) {
    return `The other cores could share this work (${all}), but it runs inside the source, which only the main thread runs: have the source yield what each element is made from (an index, a path) and do the work in an exported function you map over it, and the plan can move that map.`;
  }
  return '';
}

/**
 * `immovableWords` for an operator whose library runs it on the main thread only (tfjs-data's map,
 * a Node stream's): no export lets the plan move it there, a conversion to plumber-data does.
 */
function inDialectWords(om: OpMeasure, all: string, mostOfMain: boolean): string {
  const library = om.op.dialect ?? 'its library';
  const blocked = om.op.moveBlocked;
  if (isFnOp(om.op) && blocked !== undefined && om.op.fnModule !== undefined) {
    return `Worker threads could run it beside the main thread (${all}), but ${library} runs it on the main thread only, and ${crossingWords(blocked)} once the pipeline is converted to plumber-data.`;
  }
  if (isFnOp(om.op) && om.op.counters.calls > 0) {
    const named = om.op.fnName && /^[A-Za-z_$][\w$]*$/.test(om.op.fnName) ? om.op.fnName : undefined;
    const exported = om.op.fnModule !== undefined ? '' : named ? ` with ${named} exported (\`export function ${named}\`)` : ' with its fn written as an exported function';
    return `Worker threads could run it beside the main thread (${all}), but ${library} runs it on the main thread only: converted to plumber-data${exported}, the plan can move it.`;
  }
  if (om.op.kind === 'from' && om.op.inputs.length === 0 && mostOfMain) {
    return `The other cores could share this work (${all}), but it runs inside the source, on the main thread: have the source yield what each element is made from and do the work in an exported function you map over it, in a pipeline converted to plumber-data (${library} runs maps on the main thread too), and the plan can move that map.`;
  }
  return '';
}

/**
 * An awaiting fn its library calls one at a time (tfjs-data's mapAsync) that binds: no knob of the
 * library keeps more calls in flight, a conversion to plumber-data does. Empty otherwise.
 */
function oneAtATimeWords(m: Measured, b: Bottleneck): string {
  const om = b.opId !== undefined ? m.ops.get(b.opId) : undefined;
  if (!om || !om.isAsync || !isFnOp(om.op) || can(om.op, 'parallelism') || (b.resource !== 'latency' && b.resource !== 'sequential-op')) return '';
  const at = om.concurrency === 1 ? 'one at a time' : `${om.concurrency} at a time`;
  // An async generator is its own stage: it awaits its steps itself. A library's operator is called by the library.
  const who =
    om.op.dialect === 'async-generator' ? `${describeOp(om.op)} is an async generator: it awaits each step before the next (${at}), and a generator` : `${om.op.dialect ?? 'Its library'} awaits its calls ${at} and`;
  return `${who} has no knob for more; converted to plumber-data, the plan can keep more in flight.`;
}

/** Why an op's fn cannot cross to worker threads as it is, and what would let it. */
function crossingWords(b: MoveBlocked): string {
  const whose = b.side === 'input' ? 'the elements it takes' : 'its results';
  switch (b.change) {
    case 'class':
      return `${whose} are ${b.what}, and a copy between threads keeps their data but not their class (its methods, instanceof): ${b.side === 'input' ? 'hand it plain data (objects, arrays, typed arrays) from the step before' : 'return plain data (objects, arrays, typed arrays)'} and the plan can move it`;
    case 'buffer':
      return `${whose} hold ${b.what}, which a copy between threads turns into plain Uint8Arrays (their toString() and Buffer methods gone): ${b.side === 'input' ? 'have the step before hand on Uint8Arrays' : 'return Uint8Arrays'} and the plan can move it`;
    case 'uncloneable':
      return `${whose} hold ${b.what}, which cannot be copied between threads: ${b.side === 'input' ? 'hand it plain data from the step before' : 'return plain data'} and the plan can move it`;
    case 'altered':
      return `${whose} hold ${b.what}, which a copy between threads drops: keep that data in plain properties and the plan can move it`;
  }
}

/** The binding bound in one sentence, named after the operator that uses most of it. */
function bindingBottleneck(m: Measured, ev: Evaluation): Bottleneck {
  const b = ev.binding;
  if (!Number.isFinite(b.rate)) return { resource: b.resource, reason: b.detail };
  const eff = (id: string) => ev.eff.get(id);
  const name = (id: string) => {
    const om = m.ops.get(id);
    return om ? describeOp(om.op) : id;
  };
  switch (b.resource) {
    case 'main-thread': {
      const d = dominant(ev, (id) => (eff(id)?.main ?? 0) - (eff(id)?.overhead ?? 0));
      if (d.id === undefined) return { resource: b.resource, reason: b.detail };
      const share = d.value / ev.mainPerRoot;
      const calls = (m.ops.get(d.id)?.callsPerRoot ?? 1) * (eff(d.id)?.factor ?? 1);
      const parts = [perCallPhrase(d.value, calls), share < 0.999 ? `${Math.round(share * 100)}% of the main thread's ${formatSeconds(ev.mainPerRoot)}` : ''].filter((w) => w !== '');
      return {
        resource: b.resource,
        opId: d.id,
        reason: `${name(d.id)} runs on the main thread and needs ${formatSeconds(d.value)} per ${m.unit.one}${parts.length > 0 ? ` (${parts.join('; ')})` : ''}; the main thread can give at most ${formatRootRate(m, b.rate)}.`,
      };
    }
    case 'cpu': {
      const d = dominant(ev, (id) => (eff(id)?.main ?? 0) + (eff(id)?.worker ?? 0) + (eff(id)?.other ?? 0));
      const lead = d.id ? ` ${name(d.id)} uses ${Math.round(d.share * 100)}% of it.` : '';
      return { resource: b.resource, opId: d.id, reason: `${b.detail}${lead}` };
    }
    case 'disk': {
      const d = dominant(ev, (id) => eff(id)?.disk ?? 0);
      return { resource: b.resource, opId: d.id, reason: d.id ? `${name(d.id)} reads from disk. ${b.detail}` : b.detail };
    }
    case 'libuv': {
      const d = dominant(ev, (id) => (m.profile.ops.find((o) => o.id === id)?.placement === 'libuv' ? (eff(id)?.async ?? 0) * (m.ops.get(id)?.service ?? 0) : 0));
      return { resource: b.resource, opId: d.id, reason: b.detail };
    }
    default:
      return { resource: b.resource, opId: b.opId, reason: b.detail, ...(b.waiting ? { waiting: true } : {}) };
  }
}

/** Per-operator numbers under the configuration the profile ran with. */
export function opAnalyses(m: Measured, cfg: Config, ev: Evaluation, bottleneck: Bottleneck): OpAnalysis[] {
  const seconds = m.profile.run.seconds;
  let cpuTotal = 0;
  for (const e of ev.eff.values()) cpuTotal += e.main + e.worker + e.other;
  return m.order.map((id) => {
    const om = m.ops.get(id);
    const e = ev.eff.get(id);
    if (!om || !e) throw new Error(`The profile lists operator ${id} twice; re-run the profile.`);
    const cpu = e.main + e.worker + e.other;
    return {
      opId: id,
      visitRatio: om.visitRatio,
      measuredRate: seconds > 0 ? om.producedInWindow / seconds : 0,
      ratePerCore: cpu > 0 ? 1 / cpu : Infinity,
      cpuPerRootElement: cpu,
      cpuShare: cpuTotal > 0 ? cpu / cpuTotal : 0,
      mainThreadPerRootElement: e.main,
      bound: ev.opBound.get(id) ?? Infinity,
      placement: cfg[id].placement,
      isBottleneck: bottleneck.opId === id,
      ...(om.reader ? { readerParts: readerPartsWords(om) } : {}),
    };
  });
}

/** The analysis of a run that produced nothing: no rates to reason about, and why. */
export function emptyAnalysis(m: Measured, cores: number): Analysis {
  const err = m.profile.error;
  const reason = err ? `The run produced no elements: ${err.message}` : 'The run produced no elements, so there is nothing to analyse; check that the pipeline yields data and profile it again.';
  return {
    measuredRate: 0,
    bound: 0,
    bottleneck: { resource: 'source', opId: err?.opId, reason },
    bounds: [],
    ops: m.order.map((id) => ({
      opId: id,
      visitRatio: 0,
      measuredRate: 0,
      ratePerCore: Infinity,
      cpuPerRootElement: 0,
      cpuShare: 0,
      mainThreadPerRootElement: 0,
      bound: Infinity,
      placement: m.ops.get(id)?.op.placement ?? 'main',
      isBottleneck: false,
    })),
    cores,
  };
}
