/**
 * `plumber-data worker`: serves a cluster from this host.
 *
 *   npx plumber-data worker --redis redis://host:6379 --name images --module ./transforms.ts --concurrency 4
 */
import { startWorker } from './worker';

const USAGE = `usage: plumber-data worker --redis redis://host:6379 --name <cluster> --module <file> [--concurrency 4] [--lock-ms 5000] [--report-ms 5000] [--timeout-ms N]`;

interface Args {
  redis: string;
  name: string;
  module: string;
  concurrency: number;
  lockMs: number;
  reportMs: number;
  timeoutMs?: number;
}

function parse(argv: string[]): Args {
  if (argv[0] !== 'worker') throw new Error(argv.length === 0 ? USAGE : `unknown command '${argv[0]}'.\n${USAGE}`);
  const got = new Map<string, string>();
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf('=');
    if (!a.startsWith('--')) throw new Error(`unexpected argument '${a}'.\n${USAGE}`);
    if (eq > 0) got.set(a.slice(2, eq), a.slice(eq + 1));
    else {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value.\n${USAGE}`);
      got.set(a.slice(2), v);
    }
  }
  const known = new Set(['redis', 'name', 'module', 'concurrency', 'lock-ms', 'report-ms', 'timeout-ms']);
  for (const k of got.keys()) if (!known.has(k)) throw new Error(`unknown option --${k}.\n${USAGE}`);
  const need = (k: string): string => {
    const v = got.get(k);
    if (v === undefined || v === '') throw new Error(`--${k} is required.\n${USAGE}`);
    return v;
  };
  const num = (k: string, dflt: number): number => {
    const v = got.get(k);
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 1) throw new Error(`--${k} needs a number >= 1, not '${v}'.`);
    return Math.floor(n);
  };
  const timeoutMs = got.has('timeout-ms') ? num('timeout-ms', 0) : undefined;
  return { redis: need('redis'), name: need('name'), module: need('module'), concurrency: num('concurrency', 4), lockMs: num('lock-ms', 5000), reportMs: num('report-ms', 5000), timeoutMs };
}

async function main(): Promise<void> {
  let args: Args;
  try {
    args = parse(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(2);
  }
  const worker = await startWorker({ ...args, log: (line) => process.stdout.write(`${line}\n`) });
  let stopping = false;
  const stop = (): void => {
    if (stopping) process.exit(1);
    stopping = true;
    void worker.close().then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e: unknown) => {
  process.stderr.write(`plumber-data worker: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
