/** The gzip-csv example's step: a parsed row as a feature vector and its label. */
import { FEATURES } from './prepare';

export interface Example {
  features: Float32Array;
  label: number;
}

/** The row's features as a `Float32Array`, and its label. */
export function toExample(row: Record<string, string | number | boolean>): Example {
  const features = new Float32Array(FEATURES.length);
  for (let i = 0; i < FEATURES.length; i++) features[i] = row[FEATURES[i]!] as number;
  return { features, label: row['label'] as number };
}
