/**
 * Pacing: requests wait for typing to pause, and the garbage of old TypeScript programs is
 * collected when the editor goes quiet (and every few seconds under sustained load).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// Every edit makes TypeScript build a new program and checker; the old ones are garbage that V8
// would otherwise keep resident for a long time. Once the editor goes quiet, collect it.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as (() => void) | undefined;
let idleTimer: NodeJS.Timeout | undefined;
let lastCollect = Date.now();
function collect(): void {
  lastCollect = Date.now();
  collectGarbage?.();
}
export function activity(): void {
  clearTimeout(idleTimer);
  idleTimer = setTimeout(collect, 1000);
  idleTimer.unref();
  // Under sustained work (a workspace opening), also collect every few seconds (~100 ms each),
  // so the heap never grows to hold many generations of dead programs.
  if (Date.now() - lastCollect > 5000) setImmediate(collect);
}

// Requests wait until typing pauses (QUIET_MS without an edit to that document, at most
// MAX_WAIT_MS), so a burst of edits costs one re-extraction rather than one per keystroke.
const QUIET_MS = 30;
const MAX_WAIT_MS = 500;
const lastEdit = new Map<string, number>();
export async function quiet(uri: string | undefined): Promise<void> {
  if (uri === undefined) return;
  const start = Date.now();
  for (;;) {
    const since = Date.now() - (lastEdit.get(uri) ?? 0);
    if (since >= QUIET_MS || Date.now() - start >= MAX_WAIT_MS) return;
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS - since));
  }
}

export function uriOf(params: unknown): string | undefined {
  const p = params as { textDocument?: { uri?: unknown }; uri?: unknown; data?: { uri?: unknown } } | null;
  const uri = p?.textDocument?.uri ?? p?.uri ?? p?.data?.uri;
  return typeof uri === 'string' ? uri : undefined;
}

/** A document changed: requests about it wait for the next pause. */
export function noteEdit(uri: string): void {
  lastEdit.set(uri, Date.now());
  activity();
}
