/**
 * The text example's per-element steps, named exports so Plumber can place them in worker threads.
 * Tokenising is byte-pair encoding in pure JavaScript (gpt-tokenizer, the o200k vocabulary):
 * about a millisecond per email, all of it on the calling thread.
 */
import { encode } from 'gpt-tokenizer';

export const SEQUENCE = 512;
/** `<|endoftext|>` in the o200k vocabulary: separates documents packed into one sequence. */
export const END_OF_TEXT = 199999;

/** One email of the SpamAssassin corpus: its body (headers dropped) and whether it is spam. */
export interface Email {
  body: string;
  spam: boolean;
}

/** The corpus stores each raw email as JSON `{ group, text }`; keep the body, drop the RFC 822 headers. */
export function parseEmail(file: { text: string }): Email {
  const record = JSON.parse(file.text) as { group: string; text: string };
  const split = record.text.search(/\r?\n\r?\n/);
  return { body: split < 0 ? record.text : record.text.slice(split).trim(), spam: record.group.startsWith('spam') };
}

/** Byte-pair encodes an email's body. */
export function tokenize(email: Email): number[] {
  return encode(email.body);
}

/**
 * Packs a group of tokenised documents into full 512-token sequences, documents separated by
 * `<|endoftext|>`: no padding is trained on; the group's last, partial sequence is dropped.
 */
export function pack(docs: number[][]): Int32Array[] {
  const total = docs.reduce((n, d) => n + d.length + 1, 0);
  const stream = new Int32Array(total);
  let at = 0;
  for (const d of docs) {
    stream.set(d, at);
    at += d.length;
    stream[at++] = END_OF_TEXT;
  }
  const out: Int32Array[] = [];
  for (let start = 0; start + SEQUENCE <= total; start += SEQUENCE) out.push(stream.slice(start, start + SEQUENCE));
  return out;
}
