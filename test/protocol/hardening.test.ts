/**
 * The built language server against a careless or hostile client, over real JSON-RPC (stdio):
 * trust stated with the wrong type, untrusted text that looks like markdown, malformed framing,
 * profiles requested all at once, and a document too large to analyse whole.
 */
import * as assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PipelinesRequest, ProfileRequest, TrustChangedNotification } from '../../src/shared/protocol';
import { ROOT, SERVER, startServer, type TestClient } from './client';

const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'server', 'cli');

describe('language server against a careless or hostile client', function () {
  this.timeout(120_000);
  let root: string;
  let dir: string;
  let file: string;
  let uri: string;
  let text: string;
  const clients: TestClient[] = [];
  const start = async (...args: Parameters<typeof startServer>): Promise<TestClient> => {
    const c = await startServer(...args);
    clients.push(c);
    return c;
  };
  const open = async (c: TestClient, u = uri, t = text): Promise<void> => {
    await c.connection.sendNotification('textDocument/didOpen', { textDocument: { uri: u, languageId: 'typescript', version: 1, text: t } });
  };

  before(() => {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run \`node esbuild.mjs\` first (npm test does).`);
    root = mkdtempSync(path.join(os.tmpdir(), 'plumber-hardening-'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
    dir = path.join(root, 'project');
    cpSync(FIXTURE, dir, { recursive: true });
    file = path.join(dir, 'pipeline.ts');
    uri = pathToFileURL(file).href;
    text = readFileSync(file, 'utf8');
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.stop().catch(() => c.child.kill());
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  describe('trust', () => {
    it('treats initializationOptions.trusted "false" (a string) as untrusted and refuses to profile', async () => {
      const c = await start({ profile: { seconds: 1 } }, { trusted: 'false' });
      await open(c);
      await assert.rejects(c.connection.sendRequest(ProfileRequest, { uri, pipeline: 'numbers' }), (e: Error) => /untrusted/.test(e.message));
    });

    it('stays untrusted after a plumber/trustChanged whose trusted is the string "true"', async () => {
      const c = await start({ profile: { seconds: 1 } }, { trusted: false });
      await open(c);
      await c.connection.sendNotification(TrustChangedNotification, { trusted: 'true' as unknown as boolean });
      await assert.rejects(c.connection.sendRequest(ProfileRequest, { uri, pipeline: 'numbers' }), (e: Error) => /untrusted/.test(e.message));
    });
  });

  describe('framing', () => {
    const malformed: Array<[string, string, RegExp]> = [
      ['a header without Content-Length', 'X-Junk: 1\r\n\r\n{"jsonrpc":"2.0","id":99,"method":"shutdown"}', /a header without Content-Length/],
      ['a Content-Length that is not a number', 'Content-Length: many\r\n\r\n{}', /not a byte count/],
      ['a header line without a colon', 'hello\r\n\r\n', /without "name: value"/],
    ];
    for (const [what, bytes, why] of malformed) {
      it(`survives ${what}: logs why, skips it and answers the next request`, async () => {
        const c = await start();
        await open(c);
        const logged = c.notification<{ message: string }>('window/logMessage', (m) => /malformed LSP message/.test(m.message));
        c.child.stdin!.write(bytes);
        const r = await c.connection.sendRequest(PipelinesRequest, { uri });
        assert.deepEqual(r.pipelines.map((p) => p.name), ['numbers']);
        assert.match((await logged).message, why);
      });
    }
  });
});
