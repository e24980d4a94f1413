/**
 * The webdataset-shards example's data: WebDataset tar shards of small labelled pictures, generated
 * on first use from a fixed seed (no binary data lives in git). Each sample is three members with
 * one key — `<key>.jpg` (a 96×96 JPEG), `<key>.cls` (its class, as text) and `<key>.json` (a
 * caption) — stored together, as WebDataset's writers store them.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encode } from 'jpeg-js';
// plumber-data's seeded generator (mulberry32): the same seed gives the same data on every machine.
import { Rng } from 'plumber-data';

export const SHARD_COUNT = 8;
/** Enough samples that a profile's window, after its warm-up, sees the pipeline warm: ≈ 50 batches of 32. */
export const SAMPLES_PER_SHARD = 200;
/** Named by the shards' size, so shards of another size left from an earlier version are not read as these. */
export const SHARD_DIR = join(__dirname, 'data', `shards-${SAMPLES_PER_SHARD}`);
export const SIZE = 96;
export const CLASSES = ['circle', 'square', 'stripes', 'noise'];
/** Distinct pictures: jpeg-js spends ~60 ms setting up each encode, so samples draw from a pool. */
export const PICTURES = 64;

/** RGBA pixels of sample `n`: a class-dependent pattern on a seeded background, with grain. */
export function paint(n: number): { pixels: Uint8Array; label: number } {
  const rng = new Rng(5100 + n);
  const label = n % CLASSES.length;
  const px = new Uint8Array(SIZE * SIZE * 4);
  const bg = [rng.int(256), rng.int(256), rng.int(256)];
  const fg = [rng.int(256), rng.int(256), rng.int(256)];
  const cx = 24 + rng.int(48);
  const cy = 24 + rng.int(48);
  const r = 10 + rng.int(14);
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      const inside =
        label === 0 ? (x - cx) ** 2 + (y - cy) ** 2 < r * r : label === 1 ? Math.abs(x - cx) < r && Math.abs(y - cy) < r : label === 2 ? ((x + y) >> 3) % 2 === 0 : rng.float() < 0.5;
      const c = inside ? fg : bg;
      const grain = rng.int(24) - 12;
      const i = (y * SIZE + x) * 4;
      px[i] = c[0] + grain;
      px[i + 1] = c[1] + grain;
      px[i + 2] = c[2] + grain;
      px[i + 3] = 255;
    }
  }
  return { pixels: px, label };
}

/** One ustar header block for a regular file of `size` bytes. */
function tarHeader(name: string, size: number): Uint8Array {
  const h = new Uint8Array(512);
  const put = (at: number, text: string): void => h.set(Buffer.from(text, 'latin1'), at);
  const octal = (at: number, width: number, n: number): void => put(at, `${n.toString(8).padStart(width - 1, '0')}\0`);
  put(0, name);
  octal(100, 8, 0o644);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, size);
  octal(136, 12, 1_700_000_000); // a fixed mtime, so the same seed gives the same bytes
  put(148, '        '); // the checksum counts its own field as spaces
  put(156, '0');
  put(257, 'ustar\u000000');
  const sum = h.reduce((a, b) => a + b, 0);
  put(148, `${sum.toString(8).padStart(6, '0')}\0 `);
  return h;
}

/** A tar archive of `files` in the order given, with its end-of-archive blocks. */
export function tar(files: readonly { name: string; data: Uint8Array }[]): Buffer {
  const parts: Uint8Array[] = [];
  for (const f of files) {
    parts.push(tarHeader(f.name, f.data.length), f.data, new Uint8Array((512 - (f.data.length % 512)) % 512));
  }
  parts.push(new Uint8Array(1024));
  return Buffer.concat(parts);
}

/** Shard `s`: its samples' members, each sample's three together; sample n shows picture n mod PICTURES. */
export function shard(s: number, pictures: readonly Uint8Array[]): Buffer {
  const files: { name: string; data: Uint8Array }[] = [];
  for (let i = 0; i < SAMPLES_PER_SHARD; i++) {
    const n = s * SAMPLES_PER_SHARD + i;
    const key = `sample-${String(n).padStart(6, '0')}`;
    const label = n % CLASSES.length; // paint's label of picture n % PICTURES, since PICTURES is a multiple of CLASSES.length
    files.push({ name: `${key}.jpg`, data: pictures[n % PICTURES] });
    files.push({ name: `${key}.cls`, data: Buffer.from(String(label)) });
    files.push({ name: `${key}.json`, data: Buffer.from(JSON.stringify({ caption: `a ${CLASSES[label]}`, shard: s })) });
  }
  return tar(files);
}

/** The shard files' paths, generating them the first time (a few seconds). Synchronous, so a pipeline module can call it while it loads. */
export function ensureShards(): string[] {
  const names = Array.from({ length: SHARD_COUNT }, (_, s) => `shard-${String(s).padStart(4, '0')}.tar`);
  if (!existsSync(SHARD_DIR) || readdirSync(SHARD_DIR).length !== SHARD_COUNT) {
    rmSync(SHARD_DIR, { recursive: true, force: true }); // absent, or left incomplete by hand: start again
    const tmp = `${SHARD_DIR}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    const pictures = Array.from({ length: PICTURES }, (_, n) => encode({ data: paint(n).pixels, width: SIZE, height: SIZE }, 90).data);
    names.forEach((name, s) => writeFileSync(join(tmp, name), shard(s, pictures)));
    try {
      renameSync(tmp, SHARD_DIR);
    } catch {
      // Another process renamed its copy into place first; ours is identical.
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return names.map((name) => join(SHARD_DIR, name));
}

// `node --import tsx examples/webdataset-shards/prepare.ts` generates the shards with a word of explanation.
if (require.main === module) {
  if (!existsSync(SHARD_DIR)) console.log(`Generating ${SHARD_COUNT} WebDataset shards of ${SAMPLES_PER_SHARD} samples into ${SHARD_DIR} (first run only)…`);
  ensureShards();
}
