/** Helpers for tests that check no process of a run outlives it. */

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until the process is gone, giving up after a bound far above what it should take. */
export async function gone(pid: number, boundMs = 5000): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}
