/**
 * The built language server against a careless or hostile client, over real JSON-RPC (stdio):
 * trust stated with the wrong type, untrusted text that looks like markdown, malformed framing,
 * profiles requested all at once, and a document too large to analyse whole.
 */
import * as assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CancellationTokenSource, WorkDoneProgress, type CodeLens } from 'vscode-languageserver-protocol/node';
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
        assert.deepEqual(
          r.pipelines.map((p) => p.name),
          ['numbers'],
        );
        assert.match((await logged).message, why);
      });
    }

    it('answers the next request after a well-framed body that is not JSON', async () => {
      const c = await start();
      await open(c);
      c.child.stdin!.write('Content-Length: 5\r\n\r\n{{{{{');
      const r = await c.connection.sendRequest(PipelinesRequest, { uri });
      assert.deepEqual(
        r.pipelines.map((p) => p.name),
        ['numbers'],
      );
    });
  });

  describe('profiles requested at once', () => {
    // Short single runs: the order of the runs is what is checked, not their numbers.
    const quick = { profile: { seconds: 0.3 }, plan: { passes: 1, verify: false }, model: { cores: 2 } };
    /** Every progress notification of `tokens`, in the order the server sent them. */
    type Event = { token: string; kind: string; message: string };
    const record = (c: TestClient, tokens: string[], listen: (e: Event) => void = () => undefined): Event[] => {
      const events: Event[] = [];
      for (const token of tokens) {
        c.connection.onProgress(WorkDoneProgress.type, token, (v) => {
          const e = { token, kind: v.kind, message: v.kind === 'end' ? '' : (v.message ?? '') };
          events.push(e);
          listen(e);
        });
      }
      return events;
    };
    const RUNNING = /^numbers: profiling as written/;
    const first = (events: Array<{ token: string; message: string }>, token: string, re: RegExp): number => events.findIndex((e) => e.token === token && re.test(e.message));
    const end = (events: Array<{ token: string; kind: string }>, token: string): number => events.findIndex((e) => e.token === token && e.kind === 'end');

    it('runs three profiles one after another, the waiting ones saying what they wait for', async () => {
      const c = await start(quick);
      await open(c);
      const tokens = ['queue-1', 'queue-2', 'queue-3'];
      const events = record(c, tokens);
      const results = await Promise.all(tokens.map((workDoneToken) => c.connection.sendRequest(ProfileRequest, { uri, pipeline: 'numbers', workDoneToken })));
      for (const r of results) assert.ok(r.outcomes[0]!.ok, r.outcomes[0]!.error);
      const trace = events.map((e) => `${e.token} ${e.kind} ${e.message}`).join('\n');
      // Each run's first runner message comes after the previous run ended: no two runners overlap.
      for (const [k, token] of tokens.entries()) {
        assert.ok(first(events, token, RUNNING) >= 0, trace);
        if (k === 0) continue;
        assert.ok(end(events, tokens[k - 1]!) < first(events, token, RUNNING), trace);
        assert.ok(first(events, token, /^waiting for the profile of numbers to finish/) < first(events, token, RUNNING), trace);
      }
      assert.ok(first(events, 'queue-3', /\(1 more queued before this one\)$/) >= 0, trace);
    });

    it('never starts a profile cancelled while it waits, and runs the next one', async () => {
      const c = await start(quick);
      await open(c);
      const tokens = ['wait-1', 'wait-2', 'wait-3'];
      let waiting!: () => void;
      const told = new Promise<void>((resolve) => (waiting = resolve));
      const events = record(c, tokens, (e) => {
        if (e.token === 'wait-2' && /^waiting for/.test(e.message)) waiting();
      });
      const source = new CancellationTokenSource();
      const a = c.connection.sendRequest(ProfileRequest, { uri, pipeline: 'numbers', workDoneToken: 'wait-1' });
      const b = c.connection.sendRequest(ProfileRequest, { uri, pipeline: 'numbers', workDoneToken: 'wait-2' }, source.token);
      const third = c.connection.sendRequest(ProfileRequest, { uri, pipeline: 'numbers', workDoneToken: 'wait-3' });
      await told;
      source.cancel();
      const outcome = await b.then(
        (r) => (r.outcomes[0]!.ok ? 'ran' : 'cancelled'),
        () => 'cancelled',
      );
      assert.equal(outcome, 'cancelled');
      const [ra, rc] = await Promise.all([a, third]);
      assert.ok(ra.outcomes[0]!.ok && rc.outcomes[0]!.ok);
      const trace = events.map((e) => `${e.token} ${e.kind} ${e.message}`).join('\n');
      assert.equal(first(events, 'wait-2', RUNNING), -1, `the cancelled request started a runner:\n${trace}`);
      assert.ok(end(events, 'wait-2') >= 0, `the cancelled request's progress ended:\n${trace}`);
      assert.ok(end(events, 'wait-1') < first(events, 'wait-3', RUNNING), trace);
    });
  });

  describe('a very large document', () => {
    it('answers a 5 MB file of 48,000 pipelines partially, says where it stopped, and keeps answering', async () => {
      const big = path.join(dir, 'many.ts');
      const lines = ["import { range } from 'plumber-data';", "import { heavy } from './pipeline';"];
      for (let i = 0; i < 48_000; i++) lines.push(`export const pipeline_${i} = range(${i}).map(heavy).batch(16); // one of very many pipelines in this file`);
      writeFileSync(big, `${lines.join('\n')}\n`);
      const bigUri = pathToFileURL(big).href;
      const c = await start();
      await open(c);
      const published = c.diagnostics(bigUri);
      await open(c, bigUri, readFileSync(big, 'utf8'));
      const diags = (await published).diagnostics;
      const note = diags.find((d) => d.code === 'plumber/file-too-large');
      assert.ok(note, JSON.stringify(diags.slice(0, 3)));
      const message = typeof note.message === 'string' ? note.message : note.message.value;
      assert.match(message, /too large for Plumber to analyse whole: it analysed lines 1–\d+ .* and skipped lines \d+–48002/);
      const cutLine = note.range.start.line;
      const lenses = await c.connection.sendRequest<CodeLens[]>('textDocument/codeLens', { textDocument: { uri: bigUri } });
      // A "Profile" lens on every analysed pipeline, and none past the line where analysis stopped.
      assert.equal(lenses.length, cutLine - 2, `${lenses.length} lenses, analysis stopped at line ${cutLine + 1}`);
      assert.ok(lenses.length > 0 && lenses.length < 48_000);
      assert.ok(lenses.every((l) => l.range.start.line < cutLine));
      // The server is still answering: the next request, about another file, gets its answer.
      const r = await c.connection.sendRequest(PipelinesRequest, { uri });
      assert.deepEqual(
        r.pipelines.map((p) => p.name),
        ['numbers'],
      );
    });
  });
});
