/**
 * A converted file is a real program: it type-checks against plumber-data's types (`tsc`), and run
 * beside the original it yields the same elements in the same order. The cases of each dialect
 * are written to a scratch project that resolves this repository's packages.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { convertPipeline } from '../../../src/engine/convert';
import type { Dialect, PipelineGraph } from '../../../src/engine/graph/types';
import type { PlanChange } from '../../../src/shared/analysis';
import { convertOf, readChain } from './convertGraph';

const ROOT = path.resolve(__dirname, '../../..');

export interface RunCase {
  name: string;
  text: string;
  exportName: string;
  dialect: Dialect;
  then(p: PipelineGraph): PlanChange[];
}

/** A tfjs Dataset as far as the test reads it. */
interface TfDataset {
  toArray(): Promise<Array<{ arraySync?(): unknown }>>;
}

/** Every element a Readable, async iterable or tfjs Dataset (its tensors read as arrays, plain elements as they are) yields, in order. */
async function drain(source: AsyncIterable<unknown> | TfDataset): Promise<unknown[]> {
  if (!(Symbol.asyncIterator in source)) return (await source.toArray()).map((t) => (typeof t.arraySync === 'function' ? t.arraySync() : t));
  const out: unknown[] = [];
  for await (const x of source) out.push(x);
  return out;
}

/** A scratch TypeScript project in a temporary directory that resolves this repository's packages; the caller removes it. */
export function scratchProject(name: string, lib: string[]): string {
  const root = mkdtempSync(path.join(os.tmpdir(), `plumber-${name}-`));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name, private: true, type: 'commonjs' }));
  writeFileSync(
    path.join(root, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'Node16', moduleResolution: 'Node16', lib, types: ['node'], strict: true, noEmit: true, skipLibCheck: true }, include: ['*.ts'] }),
  );
  return root;
}

/** Fails with tsc's report unless every file of the scratch project at `root` type-checks. */
export function typeCheck(root: string): void {
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', root], { encoding: 'utf8' });
  } catch (error) {
    assert.fail(`tsc found errors in the converted files:\n${(error as { stdout?: string }).stdout ?? String(error)}`);
  }
}

/** The tests of `cases`: every converted file type-checks, and each yields what its original does. */
export function describeConvertedRuns(title: string, cases: RunCase[]): void {
  describe(title, function () {
    this.timeout(120_000);
    let root: string;

    before(() => {
      root = scratchProject('convert-cases', ['ES2022', 'DOM']);
      for (const c of cases) {
        const file = path.join(root, `${c.name}.ts`);
        const pipeline = readChain(file, c.text, c.exportName, c.dialect);
        const out = convertPipeline({ pipeline, change: convertOf(pipeline, c.dialect, c.then(pipeline)), text: c.text, moduleKind: 'cjs' });
        assert.ok(out.ok, out.ok ? '' : out.reason);
        writeFileSync(file, c.text);
        writeFileSync(path.join(root, `${c.name}-converted.ts`), out.text);
      }
    });

    after(() => rmSync(root, { recursive: true, force: true }));

    it('type-checks every converted file against plumber-data', () => {
      typeCheck(root);
    });

    for (const c of cases) {
      it(`yields the same elements in the same order as the original (${c.dialect}, ${c.name})`, async () => {
        const original = (await import(path.join(root, `${c.name}.ts`))) as Record<string, AsyncIterable<unknown> | TfDataset>;
        const converted = (await import(path.join(root, `${c.name}-converted.ts`))) as Record<string, AsyncIterable<unknown> | TfDataset>;
        const want = await drain(original[c.exportName]!);
        assert.ok(want.length > 0);
        assert.deepEqual(await drain(converted[c.exportName]!), want);
      });
    }
  });
}
