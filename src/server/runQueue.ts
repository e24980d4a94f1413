/**
 * One profile at a time. A profile measures how fast a pipeline runs on this machine's cores, so
 * two profiles that run at once each measure a machine half as large as the one they describe,
 * and every figure is wrong. Requests that arrive while one runs wait here in order, are told
 * what they wait for, and can be cancelled while waiting (a cancelled request never starts).
 */

/** What a waiting request is told: the label of the run it waits for and how many are ahead of it (1: only that run). */
export type WaitListener = (running: string, ahead: number) => void;

interface Waiter {
  label: string;
  onWait: WaitListener;
  start(): void;
}

/** The outcome of `RunQueue.run`: the task's value, or that it was cancelled before it started. */
export type Queued<T> = { started: true; value: T } | { started: false };

export class RunQueue {
  private running: string | undefined;
  private readonly waiting: Waiter[] = [];

  /** The label of the run in progress, if any. */
  get current(): string | undefined {
    return this.running;
  }

  /** How many requests wait. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Runs `task` once every request queued before it has finished. While it waits, `onWait` hears
   * what it waits for (again whenever that changes). When `signal` aborts before the task starts,
   * it leaves the queue and resolves `{ started: false }` without running the task.
   */
  async run<T>(label: string, task: () => Promise<T>, opts: { signal?: AbortSignal; onWait?: WaitListener } = {}): Promise<Queued<T>> {
    if (opts.signal?.aborted) return { started: false };
    if (this.running !== undefined) {
      const started = await new Promise<boolean>((resolve) => {
        const onAbort = (): void => {
          const at = this.waiting.indexOf(waiter);
          if (at < 0) return;
          this.waiting.splice(at, 1);
          this.tellWaiters();
          resolve(false);
        };
        const waiter: Waiter = {
          label,
          onWait: opts.onWait ?? (() => undefined),
          start: () => {
            opts.signal?.removeEventListener('abort', onAbort);
            resolve(true);
          },
        };
        this.waiting.push(waiter);
        opts.signal?.addEventListener('abort', onAbort, { once: true });
        waiter.onWait(this.running!, this.waiting.length);
      });
      if (!started) return { started: false };
    } else {
      this.running = label;
    }
    try {
      return { started: true, value: await task() };
    } finally {
      this.next();
    }
  }

  /** The run ended: hand the machine to the first waiter (synchronously, so no newcomer slips in). */
  private next(): void {
    const first = this.waiting.shift();
    this.running = first?.label;
    first?.start();
    this.tellWaiters();
  }

  private tellWaiters(): void {
    if (this.running === undefined) return;
    for (const [i, w] of this.waiting.entries()) w.onWait(this.running, i + 1);
  }
}
