/** A sync fn's findings on the main thread: its determinism, what a copy changes, and a move's costs. */
import { isDeepStrictEqual } from 'node:util';
import type { MoveBlocked } from '../../shared/profile';
import type { SampledElement } from '../tracer';
import { FIDELITY_SAMPLES, crossingChange, freshContext, handOn, normalise, priceClones, tryClone } from './calls';
import { cpuPerElement } from './timing';
import type { MainSide, MoveFindings, MoveTarget } from './types';

/** Everything measured on the main thread for one operator, within `deadline` (performance.now() ms). */
export function measureMain(t: MoveTarget, deadline: number): MainSide | undefined {
  const inputs: SampledElement[] = [];
  /** The sampled elements behind `inputs`, as the pipeline made them (the fn ran on copies). */
  const originals: unknown[] = [];
  const outputs: unknown[] = [];
  /** What the op handed on for the sample (see `handOn`). */
  const handed: unknown[] = [];
  let compared = 0;
  let differs = false;
  let cloneable = true;
  let blocked: MoveBlocked | undefined;
  for (const s of t.samples) {
    if (compared > 0 && performance.now() >= deadline) break;
    // Each call gets its own copy: a fn that changes its input in place would otherwise see a
    // different element the second time and look random.
    const a = tryClone(s.element);
    const b = tryClone(s.element);
    const pair = (x: unknown, y: unknown): [unknown, unknown] | undefined => {
      try {
        return [t.fn(x, freshContext(s.index)), t.fn(y, freshContext(s.index))];
      } catch {
        return undefined;
      }
    };
    // A copy loses a class's prototype: when the fn throws on copies, call it on the element
    // itself (a worker would get the copy, so such an fn cannot move: no move cost then).
    let results = a.ok && b.ok ? pair(a.value, b.value) : undefined;
    const copies = results !== undefined;
    results ??= pair(s.element, s.element);
    // The fn throws on this element: nothing to learn from it.
    if (results === undefined) continue;
    const [ra, rb] = results;
    const na = normalise(t.kind, ra);
    const nb = normalise(t.kind, rb);
    if (na === undefined || nb === undefined) return undefined;
    compared++;
    handOn(handed, t.kind, s.element, na);
    if (!isDeepStrictEqual(na.value, nb.value)) differs = true;
    if (compared <= FIDELITY_SAMPLES || !copies) blocked ??= crossingChange(t, s, copies ? na : undefined, na);
    if (copies && a.ok) {
      inputs.push({ element: a.value, index: s.index });
      originals.push(s.element);
      outputs.push(na.value);
    } else cloneable = false;
  }
  if (compared === 0) return undefined;
  const findings: MoveFindings = { randomObserved: differs, ...(blocked ? { moveBlocked: blocked } : {}) };
  if (blocked !== undefined || !cloneable || inputs.length === 0) return { findings, inputs: [], handed };

  const priced = priceClones(originals, outputs, deadline);
  if (priced === undefined) return { findings, inputs: [], handed };
  const n = inputs.length;
  const ctxs = inputs.map((s) => freshContext(s.index));
  const fn = t.fn;
  let mainCpu = 0;
  try {
    mainCpu = cpuPerElement(
      n,
      () => {
        for (let i = 0; i < n; i++) fn(inputs[i].element, ctxs[i]);
      },
      deadline,
    );
  } catch {
    return { findings, inputs: [], handed };
  }
  findings.moveCost = { samples: n, ...priced, mainCpuSeconds: mainCpu };
  return { findings, inputs, handed };
}
