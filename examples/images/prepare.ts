/**
 * The images example's data: an ImageNet-like corpus of 500×375 JPEGs, generated on first use from
 * a fixed seed (no binary data lives in git). Each picture is a sky-to-ground gradient with a few
 * shapes and film-grain noise, so its JPEG is about as hard to decode as a photo of that size.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encode } from 'jpeg-js';
// plumber-data's seeded generator (mulberry32): the same seed gives the same data on every machine.
import { Rng } from 'plumber-data';

export const IMAGE_DIR = join(__dirname, 'data', 'jpeg');
export const IMAGE_COUNT = 320;
export const WIDTH = 500;
export const HEIGHT = 375;

/** RGBA pixels of picture `n`. */
export function paint(n: number): Uint8Array {
  const seeded = new Rng(1000 + n);
  const rand = (): number => seeded.float();
  const px = new Uint8Array(WIDTH * HEIGHT * 4);
  const top = [rand() * 255, rand() * 255, rand() * 255];
  const bottom = [rand() * 255, rand() * 255, rand() * 255];
  const horizon = HEIGHT * (0.3 + 0.4 * rand());
  const shapes = Array.from({ length: 3 + Math.floor(rand() * 5) }, () => ({
    x: rand() * WIDTH,
    y: rand() * HEIGHT,
    rx: 20 + rand() * 120,
    ry: 20 + rand() * 90,
    color: [rand() * 255, rand() * 255, rand() * 255],
  }));
  for (let y = 0; y < HEIGHT; y++) {
    const t = y < horizon ? y / horizon : 1;
    for (let x = 0; x < WIDTH; x++) {
      let r = top[0] + (bottom[0] - top[0]) * t;
      let g = top[1] + (bottom[1] - top[1]) * t;
      let b = top[2] + (bottom[2] - top[2]) * t;
      for (const s of shapes) {
        const dx = (x - s.x) / s.rx;
        const dy = (y - s.y) / s.ry;
        if (dx * dx + dy * dy < 1) {
          const shade = 0.7 + 0.3 * Math.sin(x * 0.05 + y * 0.03);
          r = s.color[0] * shade;
          g = s.color[1] * shade;
          b = s.color[2] * shade;
        }
      }
      const grain = (rand() - 0.5) * 40;
      const i = (y * WIDTH + x) * 4;
      px[i] = r + grain;
      px[i + 1] = g + grain;
      px[i + 2] = b + grain;
      px[i + 3] = 255;
    }
  }
  return px;
}

/**
 * Makes sure the corpus exists, generating it the first time (a few seconds). Synchronous so that a
 * pipeline module can call it while it loads. Several processes may call it at once (a benchmark,
 * a test and `npm start`): each writes into its own folder and the first rename wins.
 */
export function ensureImages(): string {
  if (existsSync(IMAGE_DIR)) {
    if (readdirSync(IMAGE_DIR).length === IMAGE_COUNT) return IMAGE_DIR;
    rmSync(IMAGE_DIR, { recursive: true, force: true }); // left incomplete by hand: start again
  }
  const tmp = `${IMAGE_DIR}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  for (let n = 0; n < IMAGE_COUNT; n++) {
    const jpeg = encode({ data: paint(n), width: WIDTH, height: HEIGHT }, 85);
    writeFileSync(join(tmp, `img-${String(n).padStart(4, '0')}.jpg`), jpeg.data);
  }
  try {
    renameSync(tmp, IMAGE_DIR);
  } catch {
    // Another process renamed its copy into place first; ours is identical.
    rmSync(tmp, { recursive: true, force: true });
  }
  return IMAGE_DIR;
}

// `node --import tsx examples/images/prepare.ts` (what `npm start` runs first) generates the corpus with a word of explanation.
if (require.main === module) {
  if (!existsSync(IMAGE_DIR)) console.log(`Generating ${IMAGE_COUNT} JPEGs of ${WIDTH}×${HEIGHT} into ${IMAGE_DIR} (first run only)…`);
  ensureImages();
}
