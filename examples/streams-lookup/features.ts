/** The streams-lookup example's last step: a user's profile as the churn model's row. */
import type { Profile } from './lookup';

/** A user's features: log sessions, log spend, a country code, and the label. */
export interface Row {
  features: Float32Array;
  churned: number;
}

const COUNTRY_CODES: Record<string, number> = { DE: 0, FR: 1, GB: 2, IN: 3, JP: 4, US: 5, BR: 6, NG: 7 };

export function toRow(p: Profile): Row {
  return { features: new Float32Array([Math.log1p(p.sessions), Math.log1p(p.spendCents / 100), COUNTRY_CODES[p.country] ?? -1]), churned: p.churned ? 1 : 0 };
}
