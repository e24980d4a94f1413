/**
 * Language-server benchmark (`npm run bench:server -- --json`), against the built server over stdio:
 *   S1 code lenses for a 1,000-line file with 20 pipelines: first open, and warm (median of 20 edits);
 *   S2 resident memory after opening every file of a generated 200-file workspace;
 *   S3 a burst of 100 didChange edits, each followed by a lens request: the longest wait.
 * Lines: {"bench":"server-lens","case":"warm|first","ms":N} {"bench":"server-memory","rssMB":N}
 * {"bench":"server-burst","maxWaitMs":N}. Goals: warm ≤ 300 ms, first ≤ 3 s, ≤ 400 MB, ≤ 1 s.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CodeLens } from 'vscode-languageserver-protocol/node';
import { ROOT, startServer, type TestClient } from '../../test/protocol/client';
import { manyFiles, pipelineFile, workspaceDir } from './generate';

const json = process.argv.includes('--json');

function emit(line: Record<string, unknown>, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(line)}\n` : `${human}\n`);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function lenses(client: TestClient, uri: string): Promise<CodeLens[]> {
  const list = await client.connection.sendRequest<CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
  return Promise.all(list.map((l) => client.connection.sendRequest<CodeLens>('codeLens/resolve', l)));
}

function rssMB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

async function s1(dir: string): Promise<void> {
  const file = path.join(dir, 'big.ts');
  const text = pipelineFile(20, 1000);
  writeFileSync(file, text);
  const uri = pathToFileURL(file).href;
  const client = await startServer();
  try {
    const t0 = performance.now();
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text } });
    const first = await lenses(client, uri);
    const firstMs = performance.now() - t0;
    if (first.length < 20) throw new Error(`expected a lens per pipeline, got ${first.length}`);
    emit({ bench: 'server-lens', case: 'first', ms: Math.round(firstMs) }, `S1 first open: ${Math.round(firstMs)} ms for ${first.length} lenses (goal ≤ 3000 ms)`);
    const times: number[] = [];
    let current = text;
    for (let i = 0; i < 20; i++) {
      // A realistic keystroke: a knob literal changes in the middle of the file.
      current = current.replace(/parallelism: (\d+)/, (_m, n: string) => `parallelism: ${(Number(n) % 7) + 1}`);
      const t = performance.now();
      await client.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version: i + 2 }, contentChanges: [{ text: current }] });
      await lenses(client, uri);
      times.push(performance.now() - t);
    }
    const warm = median(times);
    emit({ bench: 'server-lens', case: 'warm', ms: Math.round(warm) }, `S1 warm: median ${Math.round(warm)} ms over 20 edits (goal ≤ 300 ms)`);
  } finally {
    await client.stop();
  }
}

async function s2(dir: string): Promise<void> {
  const files = manyFiles(dir, 200);
  const client = await startServer();
  try {
    for (const [i, file] of files.entries()) {
      const uri = pathToFileURL(file).href;
      await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text: readFileSync(file, 'utf8') } });
      await lenses(client, uri);
      if (i % 50 === 49 && !json) process.stderr.write(`  opened ${i + 1} files, RSS ${rssMB(client.child.pid!)} MB\n`);
    }
    const peak = rssMB(client.child.pid!);
    // Resident memory at rest: the server collects the garbage of old programs once typing pauses (1 s).
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const mb = rssMB(client.child.pid!);
    emit({ bench: 'server-memory', rssMB: mb, peakRssMB: peak }, `S2 RSS after opening 200 files: ${mb} MB at rest, ${peak} MB right after the last file (goal ≤ 400 MB)`);
  } finally {
    await client.stop();
  }
}

async function s3(dir: string): Promise<void> {
  const file = path.join(dir, 'burst.ts');
  const text = pipelineFile(20, 1000);
  writeFileSync(file, text);
  const uri = pathToFileURL(file).href;
  const client = await startServer();
  try {
    await client.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text } });
    await lenses(client, uri);
    const waits: Array<Promise<number>> = [];
    let current = text;
    for (let i = 0; i < 100; i++) {
      // Typing: one character at a time into a comment line, never waiting for the server.
      current = current.replace('// padding line', `// padding line${String.fromCharCode(97 + (i % 26))}`);
      void client.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version: i + 2 }, contentChanges: [{ text: current }] });
      const t = performance.now();
      waits.push(client.connection.sendRequest('textDocument/codeLens', { textDocument: { uri } }).then(() => performance.now() - t));
    }
    const all = await Promise.all(waits);
    const max = Math.max(...all);
    emit({ bench: 'server-burst', maxWaitMs: Math.round(max) }, `S3 burst of 100 edits: longest request wait ${Math.round(max)} ms, median ${Math.round(median(all))} ms (goal ≤ 1000 ms)`);
  } finally {
    await client.stop();
  }
}

async function main(): Promise<void> {
  const dir = workspaceDir(ROOT);
  try {
    await s1(dir);
    await s2(dir);
    await s3(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:server failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
