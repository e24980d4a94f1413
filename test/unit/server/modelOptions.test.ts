import * as assert from 'node:assert/strict';
import { modelOptions } from '../../../src/server/features/profile';
import { DEFAULT_SETTINGS, type Settings } from '../../../src/shared/settings';

describe('server: model options from the settings', () => {
  const with_ = (model: Partial<Settings['model']>): Settings => ({ ...structuredClone(DEFAULT_SETTINGS), model: { ...DEFAULT_SETTINGS.model, ...model } });

  it('passes plumber.model.cacheDir on as where a disk cache goes, and leaves the default when empty', () => {
    assert.equal(modelOptions(with_({ cacheDir: ' tmp/caches ' })).cacheDir, 'tmp/caches');
    assert.equal(modelOptions(with_({ cacheDir: '' })).cacheDir, undefined);
  });
});
