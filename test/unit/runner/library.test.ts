/**
 * What the runner reads from the copy of plumber-data the user's pipeline loads: the facts that
 * copy states through its public exports, left unsaid when it cannot be loaded.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WORKER_CHUNKING } from '../../../src/data/tracing';
import { libraryWorkerChunking } from '../../../src/runner/library';

const PIPELINE = path.resolve(__dirname, '../../fixtures/pipelines/work.ts');

describe("runner: what the user's plumber-data says about itself", () => {
  it('records the worker chunking the traced copy dispatches by, as its tracing contract states it', () => {
    assert.deepEqual(libraryWorkerChunking(PIPELINE), { ...WORKER_CHUNKING });
  });

  it('leaves the worker chunking unsaid where no plumber-data resolves', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plumber-library-'));
    try {
      const file = path.join(dir, 'pipeline.js');
      fs.writeFileSync(file, '');
      assert.equal(libraryWorkerChunking(file), undefined);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
