/** When to restart a crashed language server and when to give up: pure, so it is unit-tested. */

/** Crashes within this window count towards giving up. */
export const CRASH_WINDOW_MS = 3 * 60_000;
/** After this many crashes in the window the server stays down until Restart Server. */
export const MAX_CRASHES = 5;

export type CrashDecision = { action: 'restart'; delayMs: number; crashes: number } | { action: 'give-up'; crashes: number };

export class CrashPolicy {
  private times: number[] = [];

  /** Records a crash at `now` and decides: restart after a back-off of 0.5 s, 1 s, 2 s, 4 s… or give up. */
  record(now: number): CrashDecision {
    this.times = this.times.filter((t) => now - t < CRASH_WINDOW_MS);
    this.times.push(now);
    const crashes = this.times.length;
    if (crashes >= MAX_CRASHES) return { action: 'give-up', crashes };
    return { action: 'restart', delayMs: Math.min(500 * 2 ** (crashes - 1), 8_000), crashes };
  }

  /** Crashes still inside the window. */
  get count(): number {
    return this.times.length;
  }

  /** A restart the person asked for starts afresh. */
  reset(): void {
    this.times = [];
  }
}
