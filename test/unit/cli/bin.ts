/** The built `plumber` bin as the CLI tests run it: a child process in the repository's root. */
import { spawn } from 'node:child_process';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '../../..');
export const BIN = path.join(ROOT, 'bin/plumber.js');

/** A finished child process: its exit code and output. */
export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `plumber` bin and collects its exit code and output. */
export function plumber(...args: string[]): Promise<Ran> {
  return run(process.execPath, [BIN, ...args], ROOT);
}

/** Runs `command args` in `cwd` and collects its exit code and output. */
export function run(command: string, args: readonly string[], cwd: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
