import * as assert from 'node:assert/strict';
import { RunQueue } from '../../../src/server/runQueue';

/** A task that records its start and runs until `finish` is called. */
function controlled(name: string, log: string[]): { task: () => Promise<string>; finish(): void; started: Promise<void> } {
  let finish!: () => void;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    task: async () => {
      log.push(`start ${name}`);
      markStarted();
      await done;
      log.push(`end ${name}`);
      return name;
    },
    finish: () => finish(),
    started,
  };
}

describe('The profile queue', () => {
  it('runs requests one at a time, in the order they came, and tells each waiter what it waits for', async () => {
    const q = new RunQueue();
    const log: string[] = [];
    const [a, b, c] = [controlled('a', log), controlled('b', log), controlled('c', log)];
    const results = [
      q.run('a', a.task, { onWait: (r, n) => log.push(`a waits for ${r} (${n})`) }),
      q.run('b', b.task, { onWait: (r, n) => log.push(`b waits for ${r} (${n})`) }),
      q.run('c', c.task, { onWait: (r, n) => log.push(`c waits for ${r} (${n})`) }),
    ];
    await a.started;
    a.finish();
    await b.started;
    b.finish();
    await c.started;
    c.finish();
    assert.deepEqual(await Promise.all(results), [
      { started: true, value: 'a' },
      { started: true, value: 'b' },
      { started: true, value: 'c' },
    ]);
    assert.deepEqual(log, ['start a', 'b waits for a (1)', 'c waits for a (2)', 'end a', 'c waits for b (1)', 'start b', 'end b', 'start c', 'end c']);
  });

  it('never starts a request cancelled while it waits, and moves the ones behind it up', async () => {
    const q = new RunQueue();
    const log: string[] = [];
    const [a, b, c] = [controlled('a', log), controlled('b', log), controlled('c', log)];
    const cancel = new AbortController();
    const ra = q.run('a', a.task);
    const rb = q.run('b', b.task, { signal: cancel.signal });
    const rc = q.run('c', c.task, { onWait: (r, n) => log.push(`c waits for ${r} (${n})`) });
    await a.started;
    cancel.abort();
    assert.deepEqual(await rb, { started: false });
    a.finish();
    await c.started;
    c.finish();
    await Promise.all([ra, rc]);
    assert.deepEqual(log, ['start a', 'c waits for a (2)', 'c waits for a (1)', 'end a', 'start c', 'end c']);
  });

  it('frees the machine when a run fails, and the next one starts', async () => {
    const q = new RunQueue();
    const failing = q.run('a', () => Promise.reject(new Error('the runner crashed')));
    const next = q.run('b', () => Promise.resolve('b'));
    await assert.rejects(failing, /the runner crashed/);
    assert.deepEqual(await next, { started: true, value: 'b' });
    assert.equal(q.current, undefined);
  });
});
