/**
 * Training input read from an object store: fetch each object over HTTP (here from a local server
 * with 20–40 ms per request, started by the source and closed when the epoch ends), parse it,
 * drop broken records, batch. As first written: one request at a time, so the pipeline spends
 * its time waiting.
 */
import { from } from 'plumber-data';
import { objectUrls } from './server';
import { fetchObject, hasValidFare, parseTrip } from './transforms';

export const remote = from(objectUrls)
  .map(fetchObject)
  .map(parseTrip)
  .filter(hasValidFare)
  .batch(32);
