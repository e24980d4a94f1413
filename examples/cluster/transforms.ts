/**
 * The stage that runs on the cluster's workers: make a thumbnail's feature vector from an image id.
 * The image comes from a store on another host (20 ms awaited per fetch, simulated here), then a
 * little CPU work. Workers load this file by path (`--module`); the pipeline names the export.
 */

/** A stand-in for reading the image from an object store: 20 ms of waiting. */
function fetchImage(id: number): Promise<Int32Array> {
  return new Promise((resolve) =>
    setTimeout(() => {
      const px = new Int32Array(4096);
      for (let i = 0; i < px.length; i++) px[i] = (id * 31 + i * 17) & 255;
      resolve(px);
    }, 20),
  );
}

/** Fetches the image and averages it down to 64 features. */
export async function thumbnail(id: number): Promise<{ id: number; features: Float32Array }> {
  const px = await fetchImage(id);
  const features = new Float32Array(64);
  for (let i = 0; i < px.length; i++) features[i & 63] += px[i] / 64;
  return { id, features };
}
