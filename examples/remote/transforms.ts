/**
 * The remote example's per-element steps, named exports of one module. `fetchObject` spends
 * almost all of its time waiting on the network, so what helps it is more requests in flight,
 * not more threads.
 */
import { Agent, get } from 'node:http';

// Reuse connections, as any real object-store client does.
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** GETs one object and returns its body as text. */
export function fetchObject(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`GET ${url} answered ${res.statusCode}; is the object server running?`));
        return;
      }
      res.setEncoding('utf8');
      let body = '';
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
      res.on('error', reject);
    }).on('error', reject);
  });
}

/** A trip as the model sees it: seven features and the fare to predict. */
export interface Trip {
  features: Float32Array;
  fareUsd: number;
}

/** JSON text to features: distance, passengers, hour of day, day of week, and the pickup and drop-off offsets. */
export function parseTrip(json: string): Trip {
  const r = JSON.parse(json) as {
    distanceKm: number;
    passengers: number;
    pickedUpAt: string;
    fareUsd: number;
    pickup: [number, number];
    dropoff: [number, number];
  };
  const at = new Date(r.pickedUpAt);
  const features = new Float32Array([
    r.distanceKm,
    r.passengers,
    at.getUTCHours(),
    at.getUTCDay(),
    r.dropoff[0] - r.pickup[0],
    r.dropoff[1] - r.pickup[1],
    Math.hypot(r.dropoff[0] - r.pickup[0], r.dropoff[1] - r.pickup[1]),
  ]);
  return { features, fareUsd: r.fareUsd };
}

/** Drops trips with a broken fare. */
export function hasValidFare(trip: Trip): boolean {
  return trip.fareUsd > 0;
}
