/**
 * The conversion candidate. A pipeline written in a dialect (tfjs-data, Node streams, async
 * generators) is planned twice: with its operators' own levers (`OpProfile.levers`, which the
 * planner asks through `can`), and as if it were plumber-data, every lever lifted — a map whose fn
 * an importable module exports (`fnModule`) can then move to worker threads, an awaiting fn can keep
 * calls in flight. When the second plan needs a change the dialect cannot make and its predicted
 * rate beats the first's by the gain any plan must make (`minGain`), the plan gets one `convert`
 * change after the dialect's own changes, with the plumber-data changes as its `then`.
 *
 * Both plans price the operators at the costs the profile measured, the dialect's own per-element
 * cost included (the runner counts it as the stages' own time); plumber-data's operators cost less
 * per element, which the model does not price, so the conversion's prediction errs low.
 */
import type { Plan, PlanChange } from '../shared/analysis';
import type { Dialect, OpProfile, Profile } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';
import { changeTitle, inPlumberData } from './describe';
import { can, leverOf } from './knobs';

/** An operator written in a dialect, not in plumber-data. */
function foreign(op: OpProfile): boolean {
  return op.dialect !== undefined && op.dialect !== 'plumber-data';
}

/**
 * The dialect a profile's pipeline is written in, when it is not plumber-data: its root's (a Node
 * stream read from an async generator is a Node-streams pipeline), else the first foreign operator's.
 */
export function dialectOf(profile: Profile): Dialect | undefined {
  const root = profile.ops.find((op) => op.id === profile.pipeline.rootId);
  return (root && foreign(root) ? root : profile.ops.find(foreign))?.dialect;
}

/** The profile as if its operators were plumber-data's: every lever lifted, all else as measured. */
export function liftLevers(profile: Profile): Profile {
  return {
    ...profile,
    ops: profile.ops.map((op) => {
      if (op.levers === undefined) return op;
      const { levers: _lifted, ...rest } = op;
      return rest;
    }),
  };
}

/** The changes of `then` the operator's own library cannot make. */
function beyondLevers(then: PlanChange[], byId: Map<string, OpProfile>): PlanChange[] {
  return then.filter((c) => {
    const op = byId.get(c.opId);
    const lever = leverOf(c);
    return op !== undefined && lever !== undefined && !can(op, lever);
  });
}

/** A list as a person reads it: "a", "a and b", "a, b and c". */
function listed(items: string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/**
 * `inDialect` (the plan with the operators' own levers) with a `convert` change appended when
 * `asPlumber` (the plan of `liftLevers(profile)`, in the same unit: root elements, or a training
 * loop's steps per second) needs what the dialect cannot do and predicts `minGain` more; `unitRate`
 * writes a rate in that unit. The plan's prediction is then the conversion's; its runner overrides stay the
 * dialect's (the runner cannot run a conversion by overrides: the engine rewrites the chain).
 */
export function withConversion(profile: Profile, inDialect: Plan, asPlumber: Plan, unitRate: (rate: number) => string): Plan {
  const from = dialectOf(profile);
  if (from === undefined || asPlumber.changes.length === 0) return inDialect;
  const byId = new Map(profile.ops.map((op) => [op.id, op]));
  const beyond = beyondLevers(asPlumber.changes, byId);
  if (beyond.length === 0 || !(asPlumber.predictedRate > inDialect.predictedRate * (1 + C.minGain))) return inDialect;
  const converted = inPlumberData(profile);
  const whose = from.endsWith('s') ? `${from}'` : `${from}'s`;
  const own = inDialect.changes.length > 0 ? `with ${whose} own knobs (${inDialect.changes.map((c) => changeTitle(c, profile)).join('; ')})` : `as written (${whose} own knobs gain nothing)`;
  const reason =
    `${from} cannot ${listed(beyond.map((c) => changeTitle(c, converted)))}. ` +
    `Converted to plumber-data (${asPlumber.changes.map((c) => changeTitle(c, converted)).join('; ')}), the model predicts ${unitRate(asPlumber.predictedRate)}, against ${unitRate(inDialect.predictedRate)} ${own}: the plan predicts the conversion's rate. ` +
    `Both are priced at the stages' costs as measured in ${from}, its own per-element cost included; plumber-data's lower per-element cost is not priced.`;
  const convert: PlanChange = {
    kind: 'convert',
    opId: profile.pipeline.rootId,
    from,
    // Every foreign operator, whatever its dialect: the async generator a Node stream reads goes with it.
    opIds: profile.ops.filter(foreign).map((op) => op.id),
    then: asPlumber.changes,
    reason,
    predictedRate: asPlumber.predictedRate,
  };
  // A training loop's verdict is the one the prediction belongs to: the converted pipeline's.
  const notes = [...(inDialect.notes ?? []).filter((n) => n !== inDialect.trainer?.summary), ...(asPlumber.trainer ? [asPlumber.trainer.summary] : [])];
  return {
    ...inDialect,
    changes: [...inDialect.changes, convert],
    predictedRate: asPlumber.predictedRate,
    predictedBound: asPlumber.predictedBound,
    predictedBottleneck: asPlumber.predictedBottleneck,
    notes: notes.length > 0 ? notes : undefined,
    ...(asPlumber.trainer ? { trainer: asPlumber.trainer } : {}),
  };
}
