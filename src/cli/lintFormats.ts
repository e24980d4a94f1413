/**
 * `plumber lint`'s outputs: text for a person, JSON for a script, SARIF 2.1.0 for code scanning,
 * and GitHub Actions' workflow commands (annotations on the pull request's lines). Lines and
 * columns printed are 1-based; a column counts UTF-16 code units, as editors and SARIF do, and an
 * end column is the one just after the finding (SARIF's convention).
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RuleInfo } from '../engine/lints/catalog';
import type { FileFinding } from '../engine/lints/file';

/** A finding with the file it is in. */
export interface Located extends FileFinding {
  file: string;
}

export const FORMATS = ['text', 'json', 'sarif', 'github'] as const;
export type Format = (typeof FORMATS)[number];

/** A path as printed: relative to the working directory, with forward slashes; absolute when outside it. */
export function shownPath(file: string, cwd: string): string {
  const rel = path.relative(cwd, file);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return file;
  return rel.split(path.sep).join('/');
}

function position(f: FileFinding): { line: number; column: number; endLine: number; endColumn: number } {
  return { line: f.range.start.line + 1, column: f.range.start.character + 1, endLine: f.range.end.line + 1, endColumn: f.range.end.character + 1 };
}

/** One line per finding: `file:line:col  severity  rule  message`. */
export function textLines(findings: Located[], cwd: string): string {
  return findings.map((f) => `${shownPath(f.file, cwd)}:${f.range.start.line + 1}:${f.range.start.character + 1}  ${f.severity}  ${f.rule}  ${f.message}\n`).join('');
}

/** The JSON document: every finding with its place, and the files read. */
export function jsonReport(findings: Located[], files: number, cwd: string): unknown {
  return {
    files,
    findings: findings.map((f) => ({
      file: shownPath(f.file, cwd),
      ...position(f),
      severity: f.severity,
      rule: f.rule,
      message: f.message,
      related: f.related.map((r) => ({ file: shownPath(r.file, cwd), line: r.range.start.line + 1, column: r.range.start.character + 1, message: r.message })),
    })),
  };
}

/** GitHub's escaping of a workflow command's message, and of a property's value (which also escapes `:` and `,`). */
function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** `::warning file=…,line=…,col=…,endLine=…,endColumn=…,title=plumber/RULE::message`, a notice for information. */
export function githubLines(findings: Located[], cwd: string): string {
  return findings
    .map((f) => {
      const p = position(f);
      const props = [`file=${escapeProperty(shownPath(f.file, cwd))}`, `line=${p.line}`, `col=${p.column}`, `endLine=${p.endLine}`, `endColumn=${p.endColumn}`, `title=${escapeProperty(f.rule)}`];
      return `::${f.severity === 'warning' ? 'warning' : 'notice'} ${props.join(',')}::${escapeData(f.message)}\n`;
    })
    .join('');
}

const SRCROOT = '%SRCROOT%';

/** A file's artifact location: relative to the source root (the working directory) when inside it. */
function artifact(file: string, cwd: string): { uri: string; uriBaseId?: string } {
  const shown = shownPath(file, cwd);
  if (path.isAbsolute(shown)) return { uri: pathToFileURL(file).href };
  return { uri: shown.split('/').map(encodeURIComponent).join('/'), uriBaseId: SRCROOT };
}

function region(f: { range: FileFinding['range'] }): { startLine: number; startColumn: number; endLine: number; endColumn: number } {
  return { startLine: f.range.start.line + 1, startColumn: f.range.start.character + 1, endLine: f.range.end.line + 1, endColumn: f.range.end.character + 1 };
}

/** The SARIF 2.1.0 log: one run, the tool with every rule and its help, the results. */
export function sarifLog(findings: Located[], rules: RuleInfo[], tool: { version: string; informationUri: string }, cwd: string): unknown {
  const index = new Map(rules.map((r, i) => [r.id, i]));
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'Plumber',
            version: tool.version,
            semanticVersion: tool.version,
            informationUri: tool.informationUri,
            rules: rules.map((r) => ({
              id: r.id,
              name: r.id.replace(/^plumber\//, ''),
              shortDescription: { text: r.summary },
              fullDescription: { text: r.help },
              help: { text: r.help },
              properties: { measured: r.measured },
            })),
          },
        },
        originalUriBaseIds: { [SRCROOT]: { uri: pathToFileURL(cwd + path.sep).href } },
        results: findings.map((f) => ({
          ruleId: f.rule,
          ...(index.has(f.rule) ? { ruleIndex: index.get(f.rule) } : {}),
          level: f.severity === 'warning' ? 'warning' : 'note',
          message: { text: f.message },
          locations: [{ physicalLocation: { artifactLocation: artifact(f.file, cwd), region: region(f) } }],
          ...(f.related.length > 0 ? { relatedLocations: f.related.map((r, i) => ({ id: i + 1, message: { text: r.message }, physicalLocation: { artifactLocation: artifact(r.file, cwd), region: region(r) } })) } : {}),
        })),
      },
    ],
  };
}
