import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { webDatasetFormat, type WebDatasetSample } from '../../../src/data/internal/readers/webdataset';
import { CLASSES, SAMPLES_PER_SHARD, SHARD_COUNT, SIZE, ensureShards } from '../../../examples/webdataset-shards/prepare';
import { decodeSample } from '../../../examples/webdataset-shards/transforms';
import { parseAll } from './records-helpers';

describe('records: the webdataset-shards example', () => {
  let shards: string[];
  before(function () {
    this.timeout(120_000); // generated once per machine (a few seconds)
    shards = ensureShards();
  });

  it('generates tar shards GNU tar lists, each sample three adjacent members', () => {
    assert.equal(shards.length, SHARD_COUNT);
    const names = execFileSync('tar', ['-tf', shards[1]], { encoding: 'utf8' }).trim().split('\n');
    assert.equal(names.length, 3 * SAMPLES_PER_SHARD);
    const first = `sample-${String(SAMPLES_PER_SHARD).padStart(6, '0')}`;
    assert.deepEqual(names.slice(0, 3), [`${first}.jpg`, `${first}.cls`, `${first}.json`]);
  });

  it('reads every sample of every shard and decodes it to a picture, a class and a caption', async () => {
    let seen = 0;
    for (const [s, path] of shards.entries()) {
      const samples: WebDatasetSample[] = await parseAll(webDatasetFormat(), createReadStream(path), path);
      assert.equal(samples.length, SAMPLES_PER_SHARD);
      for (const [i, sample] of samples.entries()) {
        const n = s * SAMPLES_PER_SHARD + i;
        assert.equal(sample.__key__, `sample-${String(n).padStart(6, '0')}`);
        const d = decodeSample(sample);
        assert.equal(d.image.length, 3 * SIZE * SIZE);
        assert.equal(d.label, n % CLASSES.length);
        assert.equal(d.caption, `a ${CLASSES[d.label]}`);
        seen++;
      }
    }
    assert.equal(seen, SHARD_COUNT * SAMPLES_PER_SHARD);
  });
});
