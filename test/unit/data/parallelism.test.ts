/** What `parallelism: 'auto'` resolves to: one rule, stated by the tracing contract for tracers. */
import { strict as assert } from 'node:assert';
import { availableParallelism } from 'node:os';
import { AUTO_ASYNC_IN_FLIGHT, inFlightParallelism, resolveParallelism } from '../../../src/data/tracing';

describe("plumber-data: 'auto' parallelism", () => {
  it("resolves 'auto' to the machine's cores in worker threads, AUTO_ASYNC_IN_FLIGHT for an async fn on the main thread, and 1 for a sync one", () => {
    assert.equal(resolveParallelism('auto', 'worker', false), availableParallelism());
    assert.equal(resolveParallelism('auto', 'main', true), AUTO_ASYNC_IN_FLIGHT);
    assert.equal(resolveParallelism('auto', 'main', false), 1);
  });

  it('keeps a written number (rounded down), takes none as 1, and refuses one below 1', () => {
    assert.equal(resolveParallelism(3.7, 'main', false), 3);
    assert.equal(resolveParallelism(undefined, 'worker', true), 1);
    assert.throws(() => resolveParallelism(0, 'main', false), RangeError);
  });

  it("keeps AUTO_ASYNC_IN_FLIGHT calls in flight for any 'auto' fn on the main thread, since a sync fn's promises show only at run time", () => {
    assert.equal(inFlightParallelism('auto', 'main', 1), AUTO_ASYNC_IN_FLIGHT);
    assert.equal(inFlightParallelism('auto', 'worker', 8), 8);
    assert.equal(inFlightParallelism(2, 'main', 2), 2);
  });
});
