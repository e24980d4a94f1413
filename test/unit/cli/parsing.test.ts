import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { plumber } from './bin';
import { numberFlag, parseArgs, UsageError } from '../../../src/cli/args';
import { RUN_FLAGS } from '../../../src/cli/diagnoseRun';
import { writeAtomically } from '../../../src/cli/fix';
import { parseOverrides } from '../../../src/cli/overrides';
import { checkKnobOverride } from '../../../src/runner/overrides';
import { KNOB_RANGES } from '../../../src/shared/knobs';

/** The usage error `f` throws, or a failed assertion when it throws none. */
function usageError(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof UsageError, String(e));
    return e.message;
  }
  assert.fail('no usage error');
}

describe('plumber command-line parsing', function () {
  this.timeout(60_000);

  describe('names that Object.prototype holds', () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      it(`refuses --${name} as an unknown option instead of taking it for a switch`, () => {
        assert.match(
          usageError(() => parseArgs([`--${name}`, 'f.ts'], RUN_FLAGS, 'profile')),
          new RegExp(`Unknown option --${name} for \`plumber profile\`\\. Run \`plumber profile --help\``),
        );
      });
    }

    it('says "constructor" is not a command, with the commands there are (exit 2)', async () => {
      const r = await plumber('constructor', 'f.ts');
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /"constructor" is not a plumber command\. Commands: profile, plan, check, fix, lint\./);
    });

    it('says there is no help on "constructor" instead of printing the source of Object (exit 2)', async () => {
      const r = await plumber('help', 'constructor');
      assert.equal(r.code, 2, r.stdout);
      assert.doesNotMatch(r.stdout + r.stderr, /native code/);
      assert.match(r.stderr, /there is no help on "constructor"\. Topics: profile, plan, fix, lint, check\./);
      const plan = await plumber('help', 'plan');
      assert.equal(plan.code, 0);
      assert.match(plan.stdout, /^Usage: plumber plan/);
    });
  });

  describe('numbers', () => {
    const seconds = (value: string): number | undefined => numberFlag(parseArgs(['f.ts', '--seconds', value], RUN_FLAGS, 'profile'), 'seconds', { min: 0, max: 100, exclusiveMin: true });

    it('reads decimal digits, with a fraction or without', () => {
      assert.equal(seconds('16'), 16);
      assert.equal(seconds('0.5'), 0.5);
      assert.equal(seconds('.5'), 0.5);
    });

    for (const value of ['0x10', '0b10000', '0o20', '1e1', ' 16', '16 ']) {
      it(`refuses --seconds "${value}", which Number() reads as a number, and says to write decimal digits`, () => {
        assert.match(
          usageError(() => seconds(value)),
          new RegExp(`--seconds must be a number above 0 and at most 100, got "${value}" \\(write it in decimal digits, like 2 or 0\\.5`),
        );
      });
    }

    it('refuses a whole number past 2^53 (it is no longer the number typed) with the range it takes', () => {
      const p = parseArgs(['f.ts', '--max-elements', '99999999999999999999'], RUN_FLAGS, 'profile');
      assert.match(
        usageError(() => numberFlag(p, 'max-elements', { min: 1, integer: true })),
        /--max-elements must be a whole number from 1 to 9007199254740991, got "99999999999999999999"\./,
      );
    });
  });

  describe('knob ranges', () => {
    it('refuses parallelism:99999999999999999999 and prefetch:1000000000000 with the range allowed', () => {
      assert.match(
        usageError(() => parseOverrides(['12:6=parallelism:99999999999999999999'])),
        /parallelism must be a whole number from 1 to 65,536 .*or auto, got "99999999999999999999"/,
      );
      assert.match(
        usageError(() => parseOverrides(['12:6=prefetch:1000000000000'])),
        /prefetch must be a whole number from 0 to 1,048,576 .*got "1000000000000"/,
      );
      assert.match(
        usageError(() => parseOverrides(['12:6=cycleLength:65537'])),
        /cycleLength must be a whole number from 1 to 65,536/,
      );
    });

    it('takes the ends of each range', () => {
      const { parallelism, prefetch, cycleLength } = KNOB_RANGES;
      assert.deepEqual(parseOverrides([`1:1=parallelism:${parallelism.max}`, `1:1=prefetch:${prefetch.min}`, `1:1=cycleLength:${cycleLength.max}`]), {
        '1:1': { parallelism: parallelism.max, prefetch: prefetch.min, cycleLength: cycleLength.max },
      });
    });

    it('refuses in the runner what the command line refuses, so an override from the editor is bounded alike', () => {
      assert.match(checkKnobOverride('1:1', { parallelism: 1e20 }) ?? '', /parallelism must be a whole number from 1 to 65,536 or auto, got 100000000000000000000/);
      assert.match(checkKnobOverride('1:1', { prefetch: 1e12 }) ?? '', /prefetch must be a whole number from 0 to 1,048,576/);
      assert.equal(checkKnobOverride('1:1', { parallelism: 'auto', prefetch: 0, cycleLength: 1 }), undefined);
    });

    it('bounds --max-in-flight by the parallelism an override may set, since a plan gives an operator at most that many', async () => {
      const r = await plumber('plan', 'f.ts', '--max-in-flight', String(KNOB_RANGES.parallelism.max + 1));
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`--max-in-flight must be a whole number from 1 to ${KNOB_RANGES.parallelism.max}, got`));
    });
  });

  describe('files', () => {
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plumber-cli-parsing-'));
    });
    afterEach(() => {
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('says `plumber fix` was given a directory instead of printing a raw EISDIR (exit 2)', async () => {
      const r = await plumber('fix', dir);
      assert.equal(r.code, 2, r.stderr);
      assert.doesNotMatch(r.stderr, /EISDIR/);
      assert.match(r.stderr, new RegExp(`${dir} is a directory; give the pipeline's \\.ts/\\.js file\\.`));
    });

    it("names a binary file given as a .js pipeline, not a line inside Node's module loader", async () => {
      // A PNG's first bytes: a NUL is in every binary header and in no source text.
      const file = path.join(dir, 'pipeline.js');
      fs.writeFileSync(file, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]));
      const r = await plumber('profile', file, '--seconds', '1', '--quiet');
      assert.equal(r.code, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /modules\/cjs\/loader/);
      assert.match(r.stderr, new RegExp(`${file} is not a JavaScript or TypeScript file: it holds binary data\\.`));
    });

    it('writes a fixed file in place through a temp sibling it then removes', () => {
      const file = path.join(dir, 'pipeline.ts');
      fs.writeFileSync(file, 'before');
      writeAtomically(file, 'after');
      assert.equal(fs.readFileSync(file, 'utf8'), 'after');
      assert.deepEqual(fs.readdirSync(dir), ['pipeline.ts']);
    });

    it("says `plumber fix --write` could not write the file, names it, and leaves alone what holds the temp file's name", () => {
      const file = path.join(dir, 'pipeline.ts');
      fs.writeFileSync(file, 'before');
      const squatter = path.join(dir, `.pipeline.ts.plumber-${process.pid}.tmp`);
      fs.mkdirSync(squatter);
      assert.throws(() => writeAtomically(file, 'after'), new RegExp(`^Error: could not write ${file} \\(EEXIST.*\\); it is unchanged\\.`));
      assert.equal(fs.readFileSync(file, 'utf8'), 'before');
      assert.ok(fs.statSync(squatter).isDirectory());
    });

    it('points a syntax error in a .js pipeline at its line in the file', async () => {
      const file = path.join(dir, 'pipeline.js');
      fs.writeFileSync(file, 'exports.x = 1;\nconst y = ;\n');
      const r = await plumber('profile', file, '--seconds', '1', '--quiet');
      assert.equal(r.code, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /modules\/cjs\/loader/);
      assert.match(r.stderr, new RegExp(`${file} does not compile: Unexpected token ';' \\(at ${file}:2\\)`));
    });
  });
});
