/** The regression gate of `plumber check --baseline`: baselines (./baseline.ts) and the comparison (./compare.ts). */
export * from './baseline';
export * from './compare';
