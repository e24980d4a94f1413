import * as assert from 'node:assert/strict';
import { fetchObject, hasValidFare, parseTrip } from '../../../examples/remote/transforms';
import { latencyMs, OBJECT_COUNT, objectUrls, startObjectServer } from '../../../examples/remote/server';

describe('the remote example', () => {
  it('serves each object after a 20–40 ms latency', async () => {
    const server = await startObjectServer();
    const t0 = performance.now();
    const trip = parseTrip(await fetchObject(`${server.origin}/objects/3`));
    const elapsed = performance.now() - t0;
    assert.equal(trip.features.length, 7);
    assert.ok(elapsed >= latencyMs(3) - 1, `answered after ${elapsed} ms, sooner than its ${latencyMs(3)} ms latency`);
    server.done(1);
    await server.closed;
  });

  it('closes its server once every handed-out URL has been answered', async () => {
    const server = await startObjectServer();
    const bodies = await Promise.all([0, 1, 2].map((n) => fetchObject(`${server.origin}/objects/${n}`)));
    server.done(3);
    await server.closed;
    assert.equal(bodies.length, 3);
    await assert.rejects(fetchObject(`${server.origin}/objects/4`), /ECONNREFUSED|socket hang up|ECONNRESET/);
  });

  it('closes its server when the consumer stops before fetching every URL', async () => {
    const server = await startObjectServer();
    await fetchObject(`${server.origin}/objects/0`);
    server.done(10); // nine URLs were handed out but never fetched
    await server.closed;
  });

  it('tells the server how many URLs it handed out when the consumer breaks early', async () => {
    const urls: string[] = [];
    for await (const url of objectUrls()) {
      urls.push(url);
      await fetchObject(url);
      if (urls.length === 2) break;
    }
    // The server closed (or will, within its idle grace): a new request cannot be answered.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await assert.rejects(fetchObject(urls[0]), /ECONNREFUSED|socket hang up|ECONNRESET/);
  });

  it('drops about one trip in ten for a broken fare', async () => {
    const server = await startObjectServer();
    const trips = await Promise.all(Array.from({ length: 100 }, (_, n) => fetchObject(`${server.origin}/objects/${n}`).then(parseTrip)));
    server.done(100);
    await server.closed;
    const kept = trips.filter(hasValidFare).length;
    assert.ok(kept >= 80 && kept <= 97, `kept ${kept} of 100`);
    assert.ok(OBJECT_COUNT >= 1000);
  });
});
