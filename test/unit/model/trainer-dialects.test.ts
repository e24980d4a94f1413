/**
 * The trainer's plan for a dialect's pipeline (issue 49) uses only the levers its operators' own
 * library has: tfjs-data runs no fn in worker threads, so the trainer's candidates move none there
 * (that is what converting to plumber-data adds, src/model/convert.ts).
 */
import * as assert from 'node:assert/strict';
import { trainerCandidates, trainerPlan } from '../../../src/model/trainer';
import type { Profile } from '../../../src/shared/profile';
import { trainingProfile } from './training';

/** The hand-built loop of ./training.ts with its operators spelt as tfjs-data's (levers: prefetch only). */
function asTfjs(p: Profile): Profile {
  return { ...p, ops: p.ops.map((o) => ({ ...o, dialect: 'tfjs-data' as const, levers: ['prefetch' as const] })) };
}

describe('the trainer in the loop: a dialect’s own levers (model)', () => {
  it('moves an augmentation to worker threads in plumber-data, and not in tfjs-data', () => {
    const p = trainingProfile({ pipe: 3e-3, step: 1e-3 });
    assert.ok(
      trainerCandidates(p).some((c) => c.workers > 0),
      'the scenario needs a plumber-data loop the trainer plan moves to worker threads',
    );
    const tfjs = asTfjs(p);
    assert.ok(
      trainerCandidates(tfjs).every((c) => c.workers === 0),
      'no tfjs-data candidate runs worker threads',
    );
    assert.ok(!trainerPlan(tfjs)?.changes.some((c) => c.kind === 'placement'), 'no placement change for a tfjs-data map');
  });
});
