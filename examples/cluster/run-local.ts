/**
 * The cluster example on one machine: a redis-server on a free loopback port and `--workers N`
 * worker processes standing in for hosts, then `plumber plan` on pipeline.ts with the arguments
 * given after `--` (e.g. `--target-rate 1000`). Everything it starts ends with it.
 *
 *   node --import tsx examples/cluster/run-local.ts --workers 2 -- --target-rate 1000
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const own = dash >= 0 ? argv.slice(0, dash) : argv;
const planArgs = dash >= 0 ? argv.slice(dash + 1) : [];
const workersAt = own.indexOf('--workers');
const workers = workersAt >= 0 ? Math.max(1, Number(own[workersAt + 1])) : 2;

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function start(cmd: string, args: string[], ready: RegExp, env?: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const p = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  children.push(p);
  return new Promise((resolve, reject) => {
    let out = '';
    const on = (b: Buffer): void => {
      out += b.toString();
      if (ready.test(out)) {
        p.stdout?.off('data', on);
        // The workers' own lines (what they serve, their rate) go to this terminal.
        p.stdout?.pipe(process.stdout);
        if (cmd !== 'redis-server') process.stdout.write(out);
        resolve(p);
      }
    };
    p.stdout?.on('data', on);
    p.once('exit', (code) => reject(new Error(`${cmd} exited (${code}) before it was ready:\n${out}`)));
  });
}

async function main(): Promise<number> {
  const port = await freePort();
  const redis = `redis://127.0.0.1:${port}`;
  await start('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], /Ready to accept connections/);
  const bin = path.join(ROOT, 'node_modules/.bin/plumber-data');
  for (let i = 0; i < workers; i++) {
    await start(bin, ['worker', '--redis', redis, '--name', 'thumbnails', '--module', 'examples/cluster/transforms.ts', '--concurrency', '4', '--report-ms', '10000'], /serving cluster/);
  }
  const plan = spawn(process.execPath, [path.join(ROOT, 'bin/plumber.js'), 'plan', 'examples/cluster/pipeline.ts', ...planArgs], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, PLUMBER_REDIS: redis } });
  children.push(plan);
  return new Promise((resolve) => plan.once('exit', (code) => resolve(code ?? 1)));
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
