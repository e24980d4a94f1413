import * as assert from 'node:assert/strict';
import { CRASH_WINDOW_MS, CrashPolicy, MAX_CRASHES } from '../../../src/client/crashPolicy';

describe('The crash policy of the language client', () => {
  it('restarts with a doubling back-off, then gives up after a few crashes in a short time', () => {
    const policy = new CrashPolicy();
    const decisions = Array.from({ length: MAX_CRASHES }, (_, i) => policy.record(1000 + i * 1000));
    assert.deepEqual(
      decisions.slice(0, -1).map((d) => (d.action === 'restart' ? d.delayMs : -1)),
      [500, 1000, 2000, 4000],
    );
    assert.deepEqual(decisions.at(-1), { action: 'give-up', crashes: MAX_CRASHES });
  });

  it('forgets crashes older than the window', () => {
    const policy = new CrashPolicy();
    for (let i = 0; i < MAX_CRASHES - 1; i++) policy.record(i);
    const later = policy.record(CRASH_WINDOW_MS + 10);
    assert.deepEqual(later, { action: 'restart', delayMs: 500, crashes: 1 });
  });

  it('starts afresh after a restart the person asked for', () => {
    const policy = new CrashPolicy();
    for (let i = 0; i < MAX_CRASHES - 1; i++) policy.record(i);
    policy.reset();
    assert.equal(policy.record(10).action, 'restart');
  });
});
