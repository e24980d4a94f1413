import * as assert from 'node:assert/strict';
import { trustFromInit, trustFromNotification } from '../../../src/server/trust';

describe('Workspace trust as the client states it', () => {
  it('trusts a client that says nothing about trust (Neovim, a plain LSP client)', () => {
    assert.equal(trustFromInit(undefined), true);
    assert.equal(trustFromInit(null), true);
    assert.equal(trustFromInit({ settings: {} }), true);
  });

  it('trusts only a boolean true when the client states trust', () => {
    assert.equal(trustFromInit({ trusted: true }), true);
    for (const value of [false, 'false', 'true', 0, 1, null, undefined, {}, []]) {
      assert.equal(trustFromInit({ trusted: value }), false, JSON.stringify(value));
    }
  });

  it('trusts only a boolean true in plumber/trustChanged, and nothing for a malformed notification', () => {
    assert.equal(trustFromNotification({ trusted: true }), true);
    for (const params of [{ trusted: 'true' }, { trusted: 'false' }, { trusted: 1 }, {}, null, undefined, 'true']) {
      assert.equal(trustFromNotification(params), false, JSON.stringify(params));
    }
  });
});
