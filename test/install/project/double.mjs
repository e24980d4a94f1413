// The worker-thread map's function, from an ES module: doubles x and says which thread ran it.
import { threadId } from 'node:worker_threads';

export function double(x) {
  return { value: 2 * x, thread: threadId };
}
