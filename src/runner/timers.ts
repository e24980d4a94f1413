/**
 * Node's timers hold a signed 32-bit number of milliseconds: a longer delay (about 24.8 days) is
 * silently treated as 1 ms, so a generous time limit would fire at once. Every timer the runner
 * and the CLI arm from a user's number goes through here.
 */

/** The longest delay, in seconds, a Node timer can wait. */
export const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** `seconds` as milliseconds a Node timer accepts: at least 1, at most the timer's maximum. */
export function timerMs(seconds: number): number {
  if (!(seconds > 0)) return 1;
  return Math.max(1, Math.min(2 ** 31 - 1, Math.round(seconds * 1000)));
}
