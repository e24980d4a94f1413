import * as assert from 'node:assert/strict';
import * as model from '../../../src/model/describe';
import {
  compact,
  formatBytes,
  formatCount,
  formatElapsed,
  formatNumber,
  formatPercent,
  formatRate,
  formatRatio,
  formatSeconds,
  formatShare,
  formatSpeedup,
  formatSteps,
  rateWords,
  speedupOver,
  terminalRate,
} from '../../../src/shared/words';
import { formatSpeedup as statsFormatSpeedup } from '../../../src/engine/stats';

describe('The words every surface writes numbers in', () => {
  it('writes speed-ups with one decimal, two when the spread is below 0.05, whole numbers grouped from 100×', () => {
    assert.equal(formatSpeedup(1.66), '1.7×');
    assert.equal(formatSpeedup(14.3), '14.3×', 'the tree, the lens and the CLI write a 14.3× plan alike');
    assert.equal(formatSpeedup(14_053.9), '14,054×');
    assert.equal(formatSpeedup(1.66, 0.12), '1.7× ± 0.1');
    assert.equal(formatSpeedup(1.234, 0.03), '1.23× ± 0.03');
    assert.equal(formatSpeedup(14_053.9, 1373.2), '14,054× ± 1,373');
  });

  it('keeps formatSpeedup importable from the engine, where verification takes it', () => {
    assert.equal(statsFormatSpeedup, formatSpeedup);
  });

  it('writes one rate over another as a speed-up, and nothing when there is no base or no bound', () => {
    assert.equal(speedupOver(174, 100), '1.7×');
    assert.equal(speedupOver(143, 10), '14.3×');
    assert.equal(speedupOver(5, 0), undefined);
    assert.equal(speedupOver(5, undefined), undefined);
    assert.equal(speedupOver(Infinity, 10), undefined);
  });

  it("writes the model's ratios with two decimals, so a few percent still shows", () => {
    assert.equal(formatRatio(1.25), '1.25×');
    assert.equal(formatRatio(1.04), '1.04×');
  });

  it("writes a rate in the editor's few characters, with its unit", () => {
    assert.equal(rateWords(431.2), '431 el/s');
    assert.equal(rateWords(6896), '6.9k el/s');
    assert.equal(rateWords(1.28, 'batches'), '1.3 batches/s');
    assert.equal(rateWords(Infinity), '∞ el/s');
    assert.equal(compact(1_530_000), '1.5M');
  });

  it("writes a rate on the terminal with the digits of the model's sentences", () => {
    assert.equal(terminalRate(41), '41/s');
    assert.equal(terminalRate(41.6), '41.6/s');
    assert.equal(terminalRate(1.28, 'batches'), '1.28 batches/s');
    assert.equal(terminalRate(1234.4), '1,234/s', 'as the model writes "at most 1,234 el/s" beside it');
    assert.equal(terminalRate(28_345), '28,300/s');
    assert.equal(terminalRate(12), '12/s', 'no trailing zero on the progress line either');
    assert.equal(terminalRate(Infinity, 'batches'), '∞');
    assert.equal(formatRate(1234.4), '1,234 el/s');
    assert.equal(formatRate(Infinity), 'unbounded');
  });

  it('writes steps per second with at most three significant figures', () => {
    assert.equal(formatSteps(14.06), '14.1 steps/s');
    assert.equal(formatSteps(250.4), '250 steps/s');
    assert.equal(formatSteps(3.914), '3.91 steps/s');
    assert.equal(formatSteps(Infinity), '∞ steps/s');
  });

  it('writes a share at a glance as a whole percentage, <1% for a tiny one, and a percentage in a sentence to one figure below 1%', () => {
    assert.equal(formatShare(0.714), '71%');
    assert.equal(formatShare(0.001), '<1%');
    assert.equal(formatShare(0), '0%');
    assert.equal(formatPercent(0.005), '0.5%');
    assert.equal(formatPercent(0.4), '40%');
  });

  it('writes seconds, bytes and plain numbers with three significant figures and a unit', () => {
    assert.equal(formatSeconds(12.1e-3), '12.1 ms');
    assert.equal(formatSeconds(840e-6), '840 µs');
    assert.equal(formatSeconds(1.52), '1.52 s');
    assert.equal(formatSeconds(0.0433), '43.3 ms');
    assert.equal(formatBytes(410e6), '410 MB');
    assert.equal(formatBytes(1.2e9), '1.2 GB');
    assert.equal(formatBytes(3100), '3.1 kB');
    assert.equal(formatBytes(12), '12 B');
    assert.equal(formatNumber(1_150_000), '1,150,000');
    assert.equal(formatNumber(0.48), '0.48');
  });

  it('writes counts grouped in any locale, and wall-clock times at a fixed width', () => {
    assert.equal(formatCount(1_000_000), '1,000,000');
    assert.equal(formatCount(2.25), '2.3');
    assert.equal(formatElapsed(3.21), '3.2 s');
    assert.equal(formatElapsed(2, 2), '2.00 s');
  });

  // The model keeps its own copies until it imports these (src/model is another branch's); until
  // then they must not drift apart.
  it("writes seconds, bytes, numbers, rates and percentages exactly as the model's sentences do", () => {
    const values = [0, 3e-7, 4.56e-5, 0.000999, 0.0123, 0.5, 0.99949, 1, 9.999, 12.34, 99.96, 123.4, 999.6, 1234.5, 9_999.6, 12_345, 1.15e6, 4.2e9];
    for (const x of values) {
      assert.equal(formatSeconds(x), model.formatSeconds(x), `seconds ${x}`);
      assert.equal(formatBytes(x), model.formatBytes(x), `bytes ${x}`);
      assert.equal(formatNumber(x), model.formatNumber(x), `number ${x}`);
      assert.equal(formatRate(x, 'batches'), model.formatRate(x, 'batches'), `rate ${x}`);
      assert.equal(formatPercent(x / 1e4), model.formatPercent(x / 1e4), `percent ${x / 1e4}`);
    }
  });
});
