/**
 * Which files `plumber lint` reads. Named files, directories and globs (`*`, `?` and `**`, as
 * tsconfig's `include` reads them) are taken as given (a
 * pattern that matches nothing is a usage error, so a typo never passes as "clean"). With none,
 * the workspace's TypeScript: the files the project's tsconfig.json includes (or every .ts, .tsx,
 * .mts and .cts file when there is none), less what git ignores.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SOURCE_EXTENSIONS, TS_EXTENSIONS, isGlob, matchFiles, tsconfigFiles } from '../engine/graph/projectFiles';
import { UsageError } from './args';

/**
 * The files git would commit in `cwd` (tracked, or untracked and not ignored), or undefined when
 * `cwd` is not in a git work tree (or git is not installed).
 */
function gitFiles(cwd: string): Set<string> | undefined {
  try {
    const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z', '--full-name'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 256 << 20 });
    const top = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return new Set(
      out
        .split('\0')
        .filter((f) => f.length > 0)
        .map((f) => path.resolve(top, f)),
    );
  } catch {
    return undefined;
  }
}

/** The workspace's files: the tsconfig's, else every TypeScript file, less what git ignores. */
export function workspaceFiles(cwd: string): string[] {
  let candidates: string[];
  try {
    candidates = tsconfigFiles(cwd) ?? matchFiles(cwd, ['**/*'], TS_EXTENSIONS);
  } catch (error) {
    throw new UsageError(`Could not read the project's tsconfig.json (${error instanceof Error ? error.message : String(error)}). Fix it, or name the files to lint.`);
  }
  const tracked = gitFiles(cwd);
  // A path through a symlink is not what git lists: compare real paths.
  const real = tracked ? new Set([...tracked].map((f) => realOr(f))) : undefined;
  return candidates.filter((f) => !f.split(path.sep).includes('node_modules') && (real === undefined || real.has(realOr(f))));
}

function realOr(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

/** The files named on the command line: files as they are, directories' sources, globs expanded. */
export function namedFiles(args: string[], cwd: string): string[] {
  const out: string[] = [];
  for (const arg of args) {
    const abs = path.resolve(cwd, arg);
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(abs);
    } catch {
      stat = undefined;
    }
    let found: string[];
    if (stat?.isFile()) found = [abs];
    else if (stat?.isDirectory()) found = matchFiles(abs, ['**/*'], SOURCE_EXTENSIONS);
    else if (isGlob(arg)) found = matchFiles(cwd, [arg], SOURCE_EXTENSIONS);
    else throw new UsageError(`${arg} does not exist. Check the path (relative paths are resolved from ${cwd}).`);
    if (found.length === 0) throw new UsageError(`${arg} matches no TypeScript or JavaScript file.`);
    out.push(...found);
  }
  return [...new Set(out)].sort();
}
