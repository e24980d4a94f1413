/**
 * Keyword-spotting training input: read one-second WAV clips, decode, compute log-mel
 * spectrograms, go over the set epoch after epoch (the trainer decides when to stop) with
 * SpecAugment masking, batch. As first written, every epoch decodes and transforms every clip
 * again although the spectrograms never change and fit in memory many times over.
 */
import { files } from 'plumber-data';
import { ensureClips } from './prepare';
import { decodeWav, logMel, specAugment } from './transforms';

export const audio = files('*.wav', { cwd: ensureClips() })
  .map(decodeWav)
  .map(logMel)
  .repeat()
  .map(specAugment)
  .batch(32);
