import * as assert from 'node:assert/strict';
import { bound, cutMessage } from '../../../src/server/bounds';

describe('How much of a document the server analyses', () => {
  it('analyses an ordinary file whole', () => {
    const text = "import { range } from 'plumber-data';\nexport const a = range(10).map(f).batch(2);\n";
    assert.deepEqual(bound(text), { text });
  });

  it('stops before the top-level statement that goes over the call budget, keeping chains whole', () => {
    const text = ['export const a = range(1)', '  .map(f)', '  .batch(2);', 'export const b = range(2)', '  .map(f);', 'export const c = range(3);', ''].join('\n');
    const r = bound(text, { calls: 4, bytes: 1e6 });
    assert.equal(r.text, ['export const a = range(1)', '  .map(f)', '  .batch(2);', ''].join('\n'));
    assert.deepEqual(r.cut, { line: 3, lines: 6, reason: 'calls' });
    assert.ok(text.startsWith(r.text), 'a prefix: every position stays where it was');
  });

  it('stops at a line inside one statement larger than the whole budget', () => {
    const text = ['export const a = range(1)', '  .map(f)', '  .map(f)', '  .map(f);'].join('\n');
    assert.deepEqual(bound(text, { calls: 2, bytes: 1e6 }).cut, { line: 2, lines: 4, reason: 'calls' });
  });

  it('stops at the byte budget when the file holds few calls but much text', () => {
    const text = `export const a = range(1);\nexport const data = [\n${'  1,\n'.repeat(100)}];\nexport const b = range(2);\n`;
    const r = bound(text, { calls: 1000, bytes: 200 });
    assert.equal(r.cut?.reason, 'bytes');
    assert.equal(r.cut?.line, 1);
    assert.match(cutMessage(r.cut!), /analysed lines 1–1 \(up to 1 MB\) and skipped lines 2–104/);
  });
});
