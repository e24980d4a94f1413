/**
 * Pacing waits for typing to pause, which is a rule about time. The tests drive time themselves
 * (node:test's mock clock for setTimeout and Date) and assert the order of edits and answers, so a
 * loaded machine that runs the timers late cannot change what they see.
 */
import * as assert from 'node:assert/strict';
import { mock } from 'node:test';
import { noteEdit, quiet, uriOf } from '../../../src/server/pacing';

/** Lets the promise continuations that a timer started run, with the clock standing still. */
function settle(): Promise<void> {
  // setImmediate is not mocked: one real turn of the event loop after the microtasks.
  return new Promise((resolve) => setImmediate(resolve));
}

/** Moves the mock clock on by `ms`, running the timers that fall due, then their continuations. */
async function advance(ms: number): Promise<void> {
  for (let i = 0; i < ms; i++) {
    mock.timers.tick(1);
    await settle();
  }
}

describe('server pacing', () => {
  // One mock clock for the whole suite: pacing keeps a timer between calls (its idle collection),
  // and a second clock would hand out timer ids that the first one's stale timer could clear.
  before(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.now() }));
  after(async () => {
    // Let the idle collection fire on the mock clock, so no mock timer outlives the suite.
    await advance(1100);
    mock.timers.reset();
  });

  it('holds a request until the edits to its document pause, and answers it after the last edit', async () => {
    const uri = 'file:///pacing/typing.ts';
    const events: string[] = [];
    noteEdit(uri);
    events.push('edit 1');
    const answered = quiet(uri).then(() => events.push('answered'));
    // Keystrokes 10 ms apart: each comes before the quiet period (30 ms) after the previous one.
    for (let n = 2; n <= 8; n++) {
      await advance(10);
      noteEdit(uri);
      events.push(`edit ${n}`);
    }
    await advance(20);
    assert.equal(events.at(-1), 'edit 8', 'not answered before the document had been quiet for the whole quiet period');
    await advance(40);
    await answered;
    assert.deepEqual(events, ['edit 1', 'edit 2', 'edit 3', 'edit 4', 'edit 5', 'edit 6', 'edit 7', 'edit 8', 'answered']);
  });

  it('answers a request while typing goes on without a pause, rather than hold it forever', async () => {
    const uri = 'file:///pacing/endless.ts';
    const events: string[] = [];
    noteEdit(uri);
    const answered = quiet(uri).then(() => events.push('answered'));
    // Three seconds of keystrokes 10 ms apart, longer than the longest a request waits.
    for (let n = 1; n <= 300; n++) {
      await advance(10);
      noteEdit(uri);
      events.push(`edit ${n}`);
    }
    await answered;
    const at = events.indexOf('answered');
    assert.ok(at > 0, 'held for a while first');
    assert.ok(at < events.length - 1, `answered before the burst's last edit (after ${at} of 300 edits)`);
  });

  it('does not hold requests about other documents', async () => {
    const events: string[] = [];
    noteEdit('file:///pacing/busy.ts');
    const answered = quiet('file:///pacing/other.ts').then(() => events.push('answered'));
    // The clock does not move at all: the other document's edit, 0 ms ago, must not matter.
    await settle();
    noteEdit('file:///pacing/busy.ts');
    events.push('next edit of busy.ts');
    await answered;
    assert.deepEqual(events, ['answered', 'next edit of busy.ts']);
  });

  it('answers at once about a document nobody edited, or no document', async () => {
    const events: string[] = [];
    const done = Promise.all([quiet('file:///pacing/untouched.ts'), quiet(undefined)]).then(() => events.push('answered'));
    await settle();
    events.push('a turn later');
    await done;
    assert.deepEqual(events, ['answered', 'a turn later']);
  });

  it('finds the document of any request shape', () => {
    assert.equal(uriOf({ textDocument: { uri: 'file:///a.ts' } }), 'file:///a.ts');
    assert.equal(uriOf({ uri: 'file:///b.ts' }), 'file:///b.ts');
    assert.equal(uriOf({ data: { uri: 'file:///c.ts' } }), 'file:///c.ts');
    assert.equal(uriOf(null), undefined);
  });
});
