/**
 * The values a numeric knob may take, wherever a value comes from: `--override` on the command
 * line, an override sent by the editor, a plan's change, `--max-in-flight`. One table, so that a
 * value one surface accepts is never refused by another.
 */

export interface KnobRange {
  min: number;
  max: number;
}

/**
 * parallelism and cycleLength count calls, worker threads or inner datasets at once: each holds a
 * socket, a thread or a file, and a host has at most 65,536 ports, so a larger number cannot run
 * as written and is a typo. prefetch counts elements held in memory ahead of the consumer: 2^20
 * elements is more than any training step takes between two of its waits, and a larger buffer
 * only fills memory. 0 removes a prefetch.
 */
export const KNOB_RANGES = {
  parallelism: { min: 1, max: 65_536 },
  cycleLength: { min: 1, max: 65_536 },
  prefetch: { min: 0, max: 1_048_576 },
} as const satisfies Record<string, KnobRange>;

export type RangedKnob = keyof typeof KNOB_RANGES;

/** Whether `v` is a whole number within the knob's range. */
export function inKnobRange(knob: RangedKnob, v: unknown): v is number {
  const r = KNOB_RANGES[knob];
  return typeof v === 'number' && Number.isInteger(v) && v >= r.min && v <= r.max;
}

/** "a whole number from 1 to 65,536", as errors and help texts say a range. */
export function knobRangeWords(knob: RangedKnob): string {
  const r = KNOB_RANGES[knob];
  return `a whole number from ${r.min} to ${r.max.toLocaleString('en-US')}`;
}
