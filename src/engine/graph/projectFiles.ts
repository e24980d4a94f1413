/**
 * The source files a TypeScript project is made of, as its own tsconfig.json says (`files`,
 * `include`, `exclude`, `allowJs`), read with TypeScript's own reader so comments, trailing commas
 * and `extends` work as they do for tsc.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ts } from 'ts-morph';

/** Declaration files hold no pipelines. */
const DECLARATION = /\.d\.[cm]?ts$/;

/**
 * The absolute paths of the files `dir/tsconfig.json` includes, or undefined when there is none.
 * Throws with the config's own error message when it cannot be read.
 */
export function tsconfigFiles(dir: string): string[] | undefined {
  const file = path.join(dir, 'tsconfig.json');
  if (!fs.existsSync(file)) return undefined;
  const read = ts.readConfigFile(file, (f) => ts.sys.readFile(f));
  if (read.error) throw new Error(`${file}: ${ts.flattenDiagnosticMessageText(read.error.messageText, '\n')}`);
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dir, undefined, file);
  // "No inputs were found" (TS18003) only means an empty project; other errors still list what they can.
  return parsed.fileNames.filter((f) => !DECLARATION.test(f)).map((f) => path.resolve(f));
}

/** The extensions a pipeline may be written in, and the TypeScript ones a workspace is linted for. */
export const SOURCE_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];
export const TS_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts'];

/** Whether `pattern` is a glob as tsconfig's `include` reads one (`*`, `?`, `**`). */
export function isGlob(pattern: string): boolean {
  return /[*?]/.test(pattern);
}

/**
 * The files under `dir` that match `patterns` (globs as tsconfig's `include` reads them, relative
 * to `dir`) with one of `extensions`, node_modules left out, as absolute paths.
 */
export function matchFiles(dir: string, patterns: string[], extensions: string[]): string[] {
  return ts.sys
    .readDirectory(dir, extensions, ['**/node_modules'], patterns)
    .filter((f) => !DECLARATION.test(f))
    .map((f) => path.resolve(f));
}
