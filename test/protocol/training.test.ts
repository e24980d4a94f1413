/**
 * The editor's Profile on a training script (issue 13), over real JSON-RPC from a plain LSP client:
 * examples/train-digits/train.ts builds its pipeline and exports nothing; it iterates the dataset
 * in a `for await` loop. Profile Pipeline with the cursor on either chain runs the script as
 * written (as `plumber plan train.ts` does), keeps the result on the chain the loop pulled, and the
 * lens, the tree's data and the report carry the trainer's verdict in the same words.
 */
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CodeLens } from 'vscode-languageserver-protocol/node';
import { PipelinesRequest, ProfileRequest, ProfileUpdatedNotification, ReportRequest, type ProfileUpdatedParams } from '../../src/shared/protocol';
import type { Settings } from '../../src/shared/settings';
import { ROOT, SERVER, startServer, type TestClient } from './client';

const FILE = path.join(ROOT, 'examples', 'train-digits', 'train.ts');
const URI = pathToFileURL(FILE).href;
const GLANCE = /^trainer [\d.,]+ steps\/s · waits \d+% on input · plan: (\+\d+%|no change|give (all|some) worker threads back)$/;

describe('profiling a training script from the editor', function () {
  this.timeout(180_000);
  let client: TestClient;
  // Short runs, one pass, no verification: the test is about the flow, not the plan's numbers.
  const settings: { profile: Partial<Settings['profile']>; plan: Settings['plan'] } = { profile: { seconds: 2 }, plan: { passes: 1, verify: false, budgetSeconds: 15 } };

  before(async () => {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run \`node esbuild.mjs\` first (npm test does).`);
    client = await startServer(settings);
    const published = client.diagnostics(URI);
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri: URI, languageId: 'typescript', version: 1, text: readFileSync(FILE, 'utf8') } });
    await published;
  });
  after(async () => {
    await client?.stop();
  });

  /** The lenses' titles as a client shows them: it resolves only the lenses that come without a command. */
  const lenses = async (): Promise<string[]> => {
    const list = await client.connection.sendRequest<CodeLens[]>('textDocument/codeLens', { textDocument: { uri: URI } });
    const resolved = await Promise.all(list.map((l) => (l.command ? l : client.connection.sendRequest<CodeLens>('codeLens/resolve', l))));
    return resolved.map((l) => l.command?.title ?? '');
  };

  it('runs the script’s own loop when asked to profile a chain it does not export, and shows the trainer’s verdict', async () => {
    const before = await client.connection.sendRequest(PipelinesRequest, { uri: URI });
    const examples = before.pipelines.find((p) => p.name.startsWith('local:examples@'));
    const batches = before.pipelines.find((p) => p.name.startsWith('local:batches@'));
    assert.ok(examples && batches, before.pipelines.map((p) => p.name).join(', '));
    assert.ok(before.pipelines.every((p) => p.trainer === undefined));

    // The cursor on the first chain (the client sends the chain under it): the loop pulls `batches`.
    const updated = client.notification<ProfileUpdatedParams>(ProfileUpdatedNotification.method, (p) => p.uri === URI);
    const result = await client.connection.sendRequest(ProfileRequest, { uri: URI, pipeline: examples.name });
    assert.equal(result.outcomes.length, 1, JSON.stringify(result.outcomes));
    const outcome = result.outcomes[0]!;
    assert.ok(outcome.ok, outcome.error);
    assert.equal(outcome.pipeline, batches.name);
    assert.deepEqual((await updated).pipelines, [batches.name]);

    const trainerLenses = (await lenses()).filter((t) => t.startsWith('trainer'));
    assert.equal(trainerLenses.length, 1, trainerLenses.join('\n'));
    assert.match(trainerLenses[0]!, GLANCE);

    const after = await client.connection.sendRequest(PipelinesRequest, { uri: URI });
    const fed = after.pipelines.find((p) => p.name === batches.name)!;
    assert.equal(fed.trainer?.headline, trainerLenses[0], 'the tree heads the operators with the lens’s words');
    assert.match(fed.trainer!.verdict, /^(Not input-bound: )?[Tt]he trainer waited \d+% of its time for input/);
    assert.match(fed.trainer!.target, /^Target: [\d.,]+ steps\/s/);
    assert.match(fed.trainer!.plan, /^Plan: /);
    assert.equal(after.pipelines.find((p) => p.name === examples.name)!.trainer, undefined, 'the chain the loop did not pull has no verdict');

    const report = await client.connection.sendRequest(ReportRequest, { uri: URI, pipeline: batches.name });
    assert.deepEqual(report.pipeline.trainer, fed.trainer);
    assert.ok(report.profile?.trainer && report.profile.trainer.steps > 0);
  });
});
