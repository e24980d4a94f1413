/** Reading suppression comments: which rules each directive names, and which lines it covers. */
import * as assert from 'node:assert/strict';
import { isSuppressed, parseRules, parseSuppressions } from '../../../src/engine/lints/suppress';

describe('suppression comments', () => {
  it('reads rules with or without the plumber/ prefix, by commas or spaces, up to the reason', () => {
    assert.deepEqual(
      [...(parseRules(' cache-after-random, plumber/noop-buffer shard-late -- we mean it, shuffle-after-batch') as Set<string>)],
      ['plumber/cache-after-random', 'plumber/noop-buffer', 'plumber/shard-late'],
    );
    assert.equal(parseRules('  '), 'all');
    assert.equal(parseRules(' -- only a reason'), 'all');
  });

  it('covers the next line, its own line, or the whole file', () => {
    const s = parseSuppressions(
      [
        '// plumber-disable-next-line noop-buffer', // 0
        'a', // 1
        'b /* plumber-disable-line shard-late */ c', // 2
        'd // plumber-disable-line', // 3
        '// plumber-disable cache-infinite', // 4
        "const s = 'plumber-disabled'; // plumber-disablement is not a directive", // 5
      ].join('\r\n'),
    );
    assert.ok(isSuppressed(s, 'plumber/noop-buffer', 1));
    assert.ok(!isSuppressed(s, 'plumber/noop-buffer', 0));
    assert.ok(!isSuppressed(s, 'plumber/shard-late', 1));
    assert.ok(isSuppressed(s, 'plumber/shard-late', 2));
    assert.ok(isSuppressed(s, 'plumber/anything', 3));
    assert.ok(isSuppressed(s, 'plumber/cache-infinite', 100));
    assert.ok(!isSuppressed(s, 'plumber/noop-buffer', 5));
    assert.equal(s.lines.size, 3);
  });
});
