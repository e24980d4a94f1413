/**
 * How each dialect spells plumber-data's knobs in an operator's options, where its name is not
 * plumber-data's: the one table the graph (`GraphOp.optionNames`), the runner's overrides and the
 * plan's titles read. A dialect or knob not listed has no such option (tfjs-data sets its buffer with
 * a `.prefetch(n)` operator, as plumber-data does).
 */
import type { Dialect } from './profile';

/** The plan's knobs a dialect can set as an option of the operator itself. */
export type OptionKnob = 'parallelism' | 'prefetch';

export const DIALECT_OPTION_NAMES: Readonly<Partial<Record<Dialect, Readonly<Partial<Record<OptionKnob, string>>>>>> = {
  // Readable's operators (`.map(fn, { concurrency, highWaterMark })`) and Readable.from's options.
  'node-streams': { parallelism: 'concurrency', prefetch: 'highWaterMark' },
};

/** The property `knob` is written as in the options of an operator of `dialect` (absent: plumber-data's own name). */
export function optionName(dialect: Dialect | undefined, knob: OptionKnob): string {
  return (dialect !== undefined ? DIALECT_OPTION_NAMES[dialect]?.[knob] : undefined) ?? knob;
}
