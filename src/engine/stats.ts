/** The quantiles the verification's intervals use. */

/** Two-sided 95% quantiles of Student's t for 1…30 degrees of freedom. */
const T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

export function t975(df: number): number {
  if (df < 1) return Number.POSITIVE_INFINITY;
  // Beyond the table, 1.96 + 2.4/df is within 0.005 of the exact quantile.
  return df <= T975.length ? T975[df - 1]! : 1.96 + 2.4 / df;
}
