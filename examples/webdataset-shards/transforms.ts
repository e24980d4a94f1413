/**
 * The webdataset-shards example's per-sample steps. Each is a named export of this module, so
 * Plumber can move any of them to worker threads without touching the pipeline's source.
 */
import { decode as decodeJpeg } from 'jpeg-js';
import type { WebDatasetSample } from 'plumber-data';

/** What the trainer gets per sample: a channel-first picture in [0, 1], its class and caption. */
export interface Decoded {
  key: string;
  image: Float32Array;
  label: number;
  caption: string;
}

const text = new TextDecoder();

/** JPEG to a channel-first Float32Array in pure JavaScript (jpeg-js): CPU-bound on the calling thread. */
export function decodeSample(sample: WebDatasetSample): Decoded {
  const member = (field: string): Uint8Array => {
    const bytes = sample[field];
    if (!(bytes instanceof Uint8Array)) throw new Error(`${sample.__url__}: sample ${sample.__key__} has no .${field} member.`);
    return bytes;
  };
  const img = decodeJpeg(member('jpg'), { useTArray: true, formatAsRGBA: false });
  const plane = img.width * img.height;
  const image = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++) {
    image[i] = img.data[i * 3] / 255;
    image[plane + i] = img.data[i * 3 + 1] / 255;
    image[2 * plane + i] = img.data[i * 3 + 2] / 255;
  }
  const cls = text.decode(member('cls'));
  const label = Number(cls);
  if (!Number.isInteger(label)) throw new Error(`${sample.__url__}: sample ${sample.__key__} has class '${cls}', not an integer.`);
  const { caption } = JSON.parse(text.decode(member('json'))) as { caption: string };
  return { key: sample.__key__, image, label, caption };
}
