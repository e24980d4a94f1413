/**
 * The text-buckets example's own step: a tokenised email clipped to the longest sequence the model
 * takes, as an Int32Array so batches stack into one buffer. Parsing and tokenising are the text
 * example's (examples/text/transforms.ts).
 */
export { parseEmail, tokenize } from '../text/transforms';

/** The longest sequence the model takes; longer emails are cut. */
export const MAX_TOKENS = 512;

/** The first MAX_TOKENS tokens of an email, as an Int32Array. */
export function clip(tokens: number[]): Int32Array {
  return Int32Array.from(tokens.length > MAX_TOKENS ? tokens.slice(0, MAX_TOKENS) : tokens);
}

/** Bucket boundaries: emails of 0–63, 64–127, 128–255 and 256–512 tokens are batched apart. */
export const BOUNDARIES = [64, 128, 256];
/** One batch size per bucket, about 4,096 tokens per batch: short sequences in larger batches. */
export const BATCH_SIZES = [64, 32, 16, 8];

/** A sequence's length, for bucketing. */
export function length(tokens: Int32Array): number {
  return tokens.length;
}
