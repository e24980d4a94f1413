/**
 * Why a run saw no element, from what its operators did while it waited. An operator that took
 * elements and handed none on (a shuffle filling its buffer, a filter dropping everything, a batch
 * larger than what came) is named with the rate its input arrived at: the pipeline is working, and
 * the message says how long the wait is and how to profile past it. With no operator working, the
 * pipeline is waiting on something.
 */
import { describeOp } from '../shared/labels';
import { formatRate } from '../shared/words';
import type { OpProfile } from '../shared/profile';

const count = (n: number): string => Math.round(n).toLocaleString('en-US');

export function noElementMessage(name: string, ops: readonly OpProfile[], waitedSeconds: number): string {
  const none = `The pipeline "${name}" produced no element in ${waitedSeconds.toFixed(1)} s`;
  const stuck = `${none}: it may be waiting on something that never happens (a promise that never settles, a source that never yields).`;
  const byId = new Map(ops.map((o) => [o.id, o]));
  // The operator the elements stop at: it handed on none, and everything it reads from handed some on.
  const holder = ops.find((o) => o.counters.produced === 0 && o.inputs.length > 0 && o.inputs.every((i) => (byId.get(i)?.counters.produced ?? 0) > 0));
  if (!holder) return stuck;
  const taken = holder.inputs.reduce((n, i) => n + (byId.get(i)?.counters.produced ?? 0), 0);
  const feeder = byId.get(holder.inputs[0]!)!;
  const rate = taken / Math.max(waitedSeconds, 1e-9);
  const label = describeOp(holder);
  const working = `It is not stuck: ${describeOp(feeder)} handed ${count(taken)} elements on to ${label} (${formatRate(rate)})`;
  const buffer = holder.knobs.bufferSize;
  if (holder.kind === 'shuffle' && buffer !== undefined && buffer > taken) {
    const fill = buffer / rate;
    return `${none}. ${working}, and a shuffle hands on nothing until its buffer holds ${count(buffer)}: at that rate it fills in ≈ ${Math.ceil(fill)} s. Profile it with time for the fill (\`--start ${Math.ceil(fill * 1.2)}\`, the plumber.profile.startSeconds setting in the editor), or with a smaller buffer while you tune.`;
  }
  if (holder.kind === 'filter') {
    return `${none}. ${working}, which dropped every one of them: check what it keeps, or give the run more time (\`--start S\`, plumber.profile.startSeconds in the editor) if survivors are that rare.`;
  }
  return `${none}. ${working}, which handed none on yet: give the run more time (\`--start S\`, plumber.profile.startSeconds in the editor) to see its first element.`;
}
