// The background load of `--load N`: N worker threads that each spin a CPU loop until this process
// ends. Started by bench/load/index.ts with an IPC channel; it ends when told to, when killed, and
// when the channel closes (the benchmark died), so it never outlives the benchmark.
//
// The loop is int32 arithmetic seeded with a small int (see WORKLOADS.md "Benchmark trap"): it
// stays optimised, so each thread burns one core at a steady rate for the whole run.
import { Worker } from 'node:worker_threads';

const threads = Number(process.argv[2]);
if (!Number.isInteger(threads) || threads < 1) {
  console.error(`burner: expected a thread count ≥ 1, got ${process.argv[2]}`);
  process.exit(2);
}

const LOOP = `
const { parentPort, workerData } = require('node:worker_threads');
parentPort.postMessage('up');
let x = workerData | 0;
for (;;) {
  for (let i = 0; i < 1000000; i++) x = (Math.imul(x, 1103515245) + 12345 + i) | 0;
  // Never true in practice; it keeps the loop's result alive so it cannot be optimised away.
  if (x === 7) parentPort.postMessage(x);
}
`;

let up = 0;
for (let i = 0; i < threads; i++) {
  const worker = new Worker(LOOP, { eval: true, workerData: i + 1 });
  worker.once('message', () => {
    if (++up === threads) process.send?.({ type: 'ready', threads });
  });
  worker.on('error', (e) => {
    console.error(`burner: a thread failed: ${e.message}`);
    process.exit(1);
  });
}

// process.exit ends the spinning threads with the process.
process.on('disconnect', () => process.exit(0));
process.on('message', (m) => {
  if (m === 'stop') process.exit(0);
});
