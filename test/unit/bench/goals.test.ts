import { strict as assert } from 'node:assert';
import { allChecks, goalsText, type BenchLine } from '../../../bench/goals';

function line(pipeline: string, load: number, plumber: number, predicted: number): BenchLine {
  return { bench: 'model', pipeline, load, asWritten: 10, heuristic: 10, nodeHeuristic: 12, auto: 10, plumber, oracle: 20, predicted, verified: predicted, profileSeconds: 8 };
}

describe('bench goals', () => {
  it('counts the same checks in the printed summary and the JSON summary', () => {
    // Two pipelines at two loads; the worst prediction misses only in the load-1 group and overall.
    const lines = [line('a', 0, 20, 21), line('b', 0, 20, 20), line('a', 1, 20, 20), line('b', 1, 10, 20)];
    const checks = allChecks(lines);
    // Five goals a line, and two prediction goals for each of load 0, load 1 and all loads.
    assert.equal(checks.length, 4 * 5 + 3 * 2);
    const missed = checks.filter((c) => !c.met).length;
    assert.match(goalsText(lines), new RegExp(`\\n${missed} of ${checks.length} checks missed$`));
    const worst = checks.filter((c) => c.goal.startsWith('worst') && !c.met);
    assert.equal(worst.length, 2, 'load 1 and all loads');
  });
});
