// The worker-thread map's function, from a CommonJS module: doubles x and says which thread ran it.
const { threadId } = require('node:worker_threads');

exports.double = function double(x) {
  return { value: 2 * x, thread: threadId };
};
