/**
 * Suppression comments in the editor: the built server over real JSON-RPC hides the findings a
 * `plumber-disable…` comment names, keeps the others, and shows a finding again once its comment
 * is removed — the same comments `plumber lint` honours.
 */
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, SERVER, startServer, type TestClient } from './client';

const FILE = path.join(ROOT, 'test', 'fixtures', 'server', 'lints', 'suppressed.ts');

describe('suppression comments over JSON-RPC', function () {
  this.timeout(60_000);
  let client: TestClient;
  const uri = pathToFileURL(FILE).href;
  const text = readFileSync(FILE, 'utf8');

  before(async () => {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run \`node esbuild.mjs\` first (npm test does).`);
    client = await startServer({ model: { cores: 4 } });
  });
  after(async () => {
    await client?.stop();
  });

  const codesAt = (d: { diagnostics: Array<{ code?: number | string; range: { start: { line: number } } }> }): string[] => d.diagnostics.map((x) => `${x.range.start.line + 1} ${String(x.code)}`).sort();

  it('hides what the comments name and keeps the rest', async () => {
    const published = client.diagnostics(uri);
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text } });
    assert.deepEqual(codesAt(await published), ['12 plumber/shuffle-after-batch', '13 plumber/cache-infinite']);
  });

  it('shows a finding again when its comment is removed', async () => {
    const published = client.diagnostics(uri, (p) => p.version === 2 || p.diagnostics.length !== 2);
    const without = text.replace('// plumber-disable-next-line cache-after-random', '// (no directive)');
    await client.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version: 2 }, contentChanges: [{ text: without }] });
    assert.deepEqual(codesAt(await published), ['12 plumber/shuffle-after-batch', '13 plumber/cache-infinite', '9 plumber/cache-after-random']);
  });
});
