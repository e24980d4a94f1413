/**
 * The streams-transform example's data: 4,000 product reviews as gzipped JSON lines, generated
 * from a seed the first time a process asks for them (into `data/`, which git ignores), the way a
 * review export from a shop's database looks: a star rating and a few sentences of text.
 */
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export const REVIEW_COUNT = 4000;
export const SEED = 49;
export const REVIEWS_FILE = join(__dirname, 'data', `reviews-${SEED}.jsonl.gz`);

const WORDS = (
  'the a this that it was is very not really quite too so and but or of for with to in on after before ' +
  'great good fine poor bad terrible excellent awful decent solid cheap sturdy flimsy broken perfect ' +
  'battery screen charger cable case strap handle lid zipper sole seam stitching packaging manual ' +
  'arrived lasted stopped works worked fits returned recommend love hate expected ordered replaced ' +
  'quickly slowly week month day year price quality size colour delivery seller product item'
).split(' ');

/** One review: stars 1–5 and 20–60 sentences drawn from the word list by a seeded generator. */
function review(i: number): string {
  let s = (Math.imul(SEED, 0x9e3779b1) ^ i) | 0;
  const next = (n: number): number => {
    s = (Math.imul(s, 1103515245) + 12345) | 0;
    return ((s >>> 8) & 0xffff) % n;
  };
  const stars = 1 + next(5);
  const sentences: string[] = [];
  for (let k = 20 + next(41); k > 0; k--) {
    const words: string[] = [];
    for (let w = 4 + next(8); w > 0; w--) words.push(WORDS[next(WORDS.length)]!);
    sentences.push(words.join(' '));
  }
  return JSON.stringify({ id: i, stars, text: `${sentences.join('. ')}.` });
}

/** The path of the reviews file, written first when it is not there yet. */
export function ensureReviews(): string {
  if (existsSync(REVIEWS_FILE)) return REVIEWS_FILE;
  mkdirSync(join(__dirname, 'data'), { recursive: true });
  const lines: string[] = [];
  for (let i = 0; i < REVIEW_COUNT; i++) lines.push(review(i));
  // Another process may be writing it too: write aside and rename, so no reader sees half a file.
  const tmp = `${REVIEWS_FILE}.${process.pid}.tmp`;
  writeFileSync(tmp, gzipSync(`${lines.join('\n')}\n`));
  renameSync(tmp, REVIEWS_FILE);
  return REVIEWS_FILE;
}
