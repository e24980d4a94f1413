/**
 * Pipelines in the dialects people already write (Node streams, tfjs-data, async-generator chains),
 * as a plain LSP client sees them over the built server's stdio: after a real profile, per-stage
 * lenses with the bottleneck named on its own line; the Node-streams fix in the stream's own knob
 * (`concurrency`), applied and measured faster; and a chain Plumber cannot follow said so.
 */
import * as assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DiagnosticSeverity, type CodeAction, type CodeLens, type TextDocumentEdit, type TextEdit } from 'vscode-languageserver-protocol/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { PipelinesRequest, ProfileRequest } from '../../src/shared/protocol';
import { ROOT, SERVER, startServer, type TestClient } from './client';

const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'server', 'dialects');

/** A resolved lens: its 0-based line and its title. */
interface Lens {
  line: number;
  title: string;
}

describe('dialect pipelines over JSON-RPC', function () {
  // Limits that only guard a hang: each profile is a real run, slow on a busy machine.
  this.timeout(240_000);
  let client: TestClient;
  let dir: string;
  // One pass, no verification: the tests compare measured rates themselves. Planned for 4 cores so
  // that the plan does not depend on what the shared machine's cores are busy with.
  const settings = { profile: { seconds: 1 }, plan: { passes: 1, verify: false, budgetSeconds: 15 }, model: { cores: 4 } };

  before(async function () {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run \`node esbuild.mjs\` first (npm test does).`);
    const root = mkdtempSync(path.join(os.tmpdir(), 'plumber-dialects-'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
    dir = path.join(root, 'project');
    cpSync(FIXTURE, dir, { recursive: true });
    client = await startServer(settings);
  });
  after(async () => {
    await client?.stop();
    rmSync(path.dirname(dir), { recursive: true, force: true });
  });

  const uriOf = (name: string): string => pathToFileURL(path.join(dir, name)).href;
  const textOf = (name: string): string => readFileSync(path.join(dir, name), 'utf8');
  /** 0-based line of the first line of `text` containing `needle`. */
  const lineOf = (text: string, needle: string): number => {
    const line = text.split('\n').findIndex((l) => l.includes(needle));
    assert.ok(line >= 0, `no line contains ${needle}`);
    return line;
  };
  const open = async (name: string): Promise<void> => {
    const uri = uriOf(name);
    const published = client.diagnostics(uri);
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text: textOf(name) } });
    await published;
  };
  const lenses = async (uri: string): Promise<Lens[]> => {
    const list = await client.connection.sendRequest<CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
    const resolved = await Promise.all(list.map((l) => client.connection.sendRequest<CodeLens>('codeLens/resolve', l)));
    return resolved.map((l) => ({ line: l.range.start.line, title: l.command?.title ?? '' }));
  };
  const show = (ls: Lens[]): string => ls.map((l) => `${l.line + 1}: ${l.title}`).join('\n');
  /** Profiles `pipeline` of `uri` for real and returns the measured root rate. */
  const profile = async (uri: string, pipeline: string): Promise<number> => {
    const result = await client.connection.sendRequest(ProfileRequest, { uri, pipeline });
    assert.equal(result.outcomes.length, 1);
    assert.ok(result.outcomes[0]!.ok, result.outcomes[0]!.error);
    assert.ok(result.outcomes[0]!.rate! > 0);
    return result.outcomes[0]!.rate!;
  };
  /**
   * The lenses after a profile: a rate on every stage's line in `stageLines`, and the one lens that
   * names the bottleneck sits on `bottleneckLine`, with a reason matching `why`.
   */
  const assertStageLenses = (ls: Lens[], unit: RegExp, stageLines: number[], bottleneckLine: number, why: RegExp): void => {
    for (const line of stageLines) {
      assert.ok(
        ls.some((l) => l.line === line && unit.test(l.title)),
        `no rate on line ${line + 1}:\n${show(ls)}`,
      );
    }
    const named = ls.filter((l) => /bottleneck: /.test(l.title));
    assert.ok(named.length > 0, `no lens names a bottleneck:\n${show(ls)}`);
    for (const l of named) assert.equal(l.line, bottleneckLine, `the bottleneck is named on line ${l.line + 1}, not ${bottleneckLine + 1}:\n${show(ls)}`);
    assert.ok(
      named.some((l) => why.test(l.title)),
      `the bottleneck lens does not say ${why}:\n${show(ls)}`,
    );
  };

  it('profiles a Node-streams chain, names map(lookup) on its line, and its quick fix writes concurrency, which measures faster', async () => {
    const name = 'streams.ts';
    const uri = uriOf(name);
    const text = textOf(name);
    await open(name);
    const listed = await client.connection.sendRequest(PipelinesRequest, { uri });
    assert.deepEqual(
      listed.pipelines.map((p) => p.name),
      ['users'],
    );
    const before = await profile(uri, 'users');
    const slow = lineOf(text, '.map(lookup');
    assertStageLenses(await lenses(uri), /el\/s/, [lineOf(text, 'Readable.from('), slow, lineOf(text, '.filter(active)')], slow, /bottleneck: waiting, too few calls in flight/);

    const actions = await client.connection.sendRequest<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: { start: { line: slow, character: 6 }, end: { line: slow, character: 6 } },
      context: { diagnostics: [] },
    });
    const fix = actions.find((a) => a.title.startsWith('Apply Plumber fix: ') && !a.disabled && /concurrency/.test(a.title));
    assert.ok(fix, actions.map((a) => `${a.title}${a.disabled ? ` (disabled: ${a.disabled.reason})` : ''}`).join('\n'));
    const change = fix.edit!.documentChanges![0] as TextDocumentEdit;
    assert.equal(change.textDocument.version, 1);
    const fixed = TextDocument.applyEdits(TextDocument.create(uri, 'typescript', 1, text), change.edits as TextEdit[]);
    // The stream's own option, never plumber-data's name for it.
    const n = /\.map\(lookup, \{ concurrency: (\d+) \}\)/.exec(fixed);
    assert.ok(n, fixed);
    assert.ok(Number(n[1]) > 1, n[0]);
    assert.doesNotMatch(fixed, /parallelism/);
    assert.match(fixed, /\/\/ the slow step/);
    // Only the map's options changed.
    assert.equal(fixed.replace(n[0], '.map(lookup, { concurrency: 1 })'), text);

    // Saved as the editor would, then profiled again: 2 ms lookups with many in flight are far
    // faster (≈10–20×), so "faster" holds however busy the machine is.
    writeFileSync(path.join(dir, name), fixed);
    const refreshed = client.nextLensRefresh();
    await client.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version: 2 }, contentChanges: [{ text: fixed }] });
    await client.connection.sendNotification('textDocument/didSave', { textDocument: { uri } });
    await refreshed;
    const after = await profile(uri, 'users');
    assert.ok(after > before, `as written ${before} el/s, with concurrency ${n[1]} ${after} el/s`);
  });

  it('profiles a tfjs-data pipeline (the real @tensorflow/tfjs-data) and names the main-thread map(decode) on its line', async () => {
    const name = 'tfjs.ts';
    const uri = uriOf(name);
    const text = textOf(name);
    await open(name);
    await profile(uri, 'train');
    const slow = lineOf(text, '.map(decode)');
    assertStageLenses(await lenses(uri), /batches\/s/, [lineOf(text, '.generator(records)'), slow, lineOf(text, '.batch(8)'), lineOf(text, '.prefetch(2)')], slow, /bottleneck: main thread/);
  });

  it('profiles an async-generator chain composed by calls and names the waiting stage on its line, as waiting', async () => {
    const name = 'generators.ts';
    const uri = uriOf(name);
    const text = textOf(name);
    await open(name);
    await profile(uri, 'samples');
    const slow = lineOf(text, 'fetchAll(ids)');
    assertStageLenses(await lenses(uri), /el\/s/, [lineOf(text, 'read(1_000_000)'), slow, lineOf(text, 'evens(fetched)')], slow, /bottleneck: waiting/);
  });

  it('says, as an Information diagnostic on the loop, that it cannot follow a chain built in a loop', async () => {
    const name = 'loop.ts';
    const uri = uriOf(name);
    const text = textOf(name);
    const published = client.diagnostics(uri);
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text } });
    const diags = (await published).diagnostics;
    const stop = diags.find((d) => d.code === 'plumber/not-followed');
    assert.ok(stop, JSON.stringify(diags));
    assert.equal(stop.severity, DiagnosticSeverity.Information);
    assert.equal(stop.range.start.line, lineOf(text, 'for (const f of steps)'));
    assert.match(String(stop.message), /in a loop/);
    // No numbers for what it cannot follow: no pipeline and no lens.
    assert.deepEqual((await client.connection.sendRequest(PipelinesRequest, { uri })).pipelines, []);
    assert.deepEqual(await lenses(uri), []);
  });
});
