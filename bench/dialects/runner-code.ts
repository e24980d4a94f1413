/**
 * Loaded into the untraced probe (`--import`) when tracing's own cost is measured: the code the
 * runner's process holds (its tracer, the dialect adapters, plumber-data), loaded and not
 * installed. How much code a process has loaded moves V8's optimisation of a hot loop that never
 * calls it: the generators example runs about 25% slower per CPU-second with any sizeable module
 * imported beside it (src/model/describe.ts does it too), tfjs loaded costs others 15–20%. Against
 * a bare process that effect would be charged to tracing.
 */
import '../../src/runner/tracer';
import '../../src/runner/dialects/index';
import '../../src/data/index';
