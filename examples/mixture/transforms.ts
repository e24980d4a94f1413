/**
 * The mixture example's steps: an email of the SpamAssassin corpus as a labelled, tokenised
 * example. Parsing and tokenising are the text example's (examples/text/transforms.ts).
 */
import { parseEmail, tokenize } from '../text/transforms';

/** A classifier's input: the first tokens of an email and its label (1 spam, 0 ham). */
export interface Labelled {
  tokens: Int32Array;
  label: number;
}

/** Tokens a classifier reads of each email. */
export const TOKENS = 256;

/** Parses and tokenises one email file, keeping its first TOKENS tokens (zero-padded) and its label. */
export function toExample(file: { text: string }): Labelled {
  const email = parseEmail(file);
  const tokens = new Int32Array(TOKENS);
  const all = tokenize(email);
  tokens.set(all.length > TOKENS ? all.slice(0, TOKENS) : all);
  return { tokens, label: email.spam ? 1 : 0 };
}
