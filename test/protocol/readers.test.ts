/**
 * A reader of stored data in the editor, as a plain LSP client sees it over the built server's
 * stdio: the gzip-csv example (its shards generated on first use) profiled for real, a rate on the
 * `csv(…)` line, and its hover splitting the reader's work per row into reading, decompressing and
 * parsing, with the part that binds named.
 */
import * as assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CodeLens, Hover, MarkupContent } from 'vscode-languageserver-protocol/node';
import { PipelinesRequest, ProfileRequest } from '../../src/shared/protocol';
import { ROOT, SERVER, startServer, type TestClient } from './client';

describe('a reader (csv of gzip’d shards) over JSON-RPC', function () {
  // Limits that only guard a hang: the shards are generated, then profiled, on a busy machine.
  this.timeout(300_000);
  let client: TestClient;
  let dir: string;
  const settings = { profile: { seconds: 1.5 }, plan: { passes: 1, verify: false, budgetSeconds: 15 }, model: { cores: 2 } };

  before(async function () {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run \`node esbuild.mjs\` first (npm test does).`);
    const root = mkdtempSync(path.join(os.tmpdir(), 'plumber-readers-'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
    dir = path.join(root, 'gzip-csv');
    cpSync(path.join(ROOT, 'examples', 'gzip-csv'), dir, { recursive: true, filter: (src) => !src.includes(`${path.sep}data`) });
    client = await startServer(settings);
  });
  after(async () => {
    await client?.stop();
    if (dir) rmSync(path.dirname(dir), { recursive: true, force: true });
  });

  it('profiles the example, puts a rate on the csv line and splits the reader’s work in its hover', async () => {
    const file = path.join(dir, 'pipeline.ts');
    const uri = pathToFileURL(file).href;
    const text = readFileSync(file, 'utf8');
    const published = client.diagnostics(uri);
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text } });
    await published;
    const listed = await client.connection.sendRequest(PipelinesRequest, { uri });
    assert.deepEqual(
      listed.pipelines.map((p) => p.name),
      ['rows'],
    );
    const result = await client.connection.sendRequest(ProfileRequest, { uri, pipeline: 'rows' });
    assert.equal(result.outcomes.length, 1);
    assert.ok(result.outcomes[0]!.ok, result.outcomes[0]!.error);

    const line = text.split('\n').findIndex((l) => l.includes('csv('));
    const character = text.split('\n')[line]!.indexOf('csv(');
    const list = await client.connection.sendRequest<CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
    const resolved = await Promise.all(list.map((l) => client.connection.sendRequest<CodeLens>('codeLens/resolve', l)));
    const titles = resolved.map((l) => `${l.range.start.line + 1}: ${l.command?.title ?? ''}`);
    assert.ok(
      resolved.some((l) => l.range.start.line === line && /\/s/.test(l.command?.title ?? '')),
      `no rate on the csv line ${line + 1}:\n${titles.join('\n')}`,
    );

    const hover = await client.connection.sendRequest<Hover>('textDocument/hover', { textDocument: { uri }, position: { line, character: character + 1 } });
    const value = (hover?.contents as MarkupContent | undefined)?.value ?? '';
    assert.match(value, /Reader: .*(reading|decompress|pars)/i, value);
    assert.match(value, /binds on (reading|decompressing|parsing)/, value);
  });
});
