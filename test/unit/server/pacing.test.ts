import * as assert from 'node:assert/strict';
import { noteEdit, quiet, uriOf } from '../../../src/server/pacing';

describe('server pacing', () => {
  it('holds a request until the edits to its document stop', async () => {
    const uri = 'file:///pacing/typing.ts';
    let lastEdit = 0;
    let typing = 0;
    noteEdit(uri);
    const burst = setInterval(() => {
      noteEdit(uri);
      lastEdit = Date.now();
      if (++typing === 8) clearInterval(burst);
    }, 10);
    await quiet(uri);
    assert.equal(typing, 8, 'the request was answered only after the burst ended');
    assert.ok(Date.now() >= lastEdit);
  });

  it('does not hold requests about other documents', async () => {
    let typing = 0;
    noteEdit('file:///pacing/busy.ts');
    const burst = setInterval(() => {
      noteEdit('file:///pacing/busy.ts');
      if (++typing === 20) clearInterval(burst);
    }, 10);
    await quiet('file:///pacing/other.ts');
    assert.ok(typing < 20, 'answered while the other document was still being edited');
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (typing === 20) {
          clearInterval(check);
          resolve();
        }
      }, 10);
    });
  });

  it('finds the document of any request shape', () => {
    assert.equal(uriOf({ textDocument: { uri: 'file:///a.ts' } }), 'file:///a.ts');
    assert.equal(uriOf({ uri: 'file:///b.ts' }), 'file:///b.ts');
    assert.equal(uriOf({ data: { uri: 'file:///c.ts' } }), 'file:///c.ts');
    assert.equal(uriOf(null), undefined);
  });
});
