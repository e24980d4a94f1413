import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { overridesToFlags, parseOverrides } from '../../../src/cli/overrides';

describe('plumber --override', () => {
  it('reads a worker module typed as a relative path as a path from the working directory', () => {
    const o = parseOverrides(['11:4=placement:worker', '11:4=module:examples/images/transforms.ts']);
    assert.deepEqual(o, { '11:4': { placement: 'worker', module: path.resolve('examples/images/transforms.ts') } });
  });

  it('keeps absolute paths and file: URLs as written', () => {
    assert.equal(parseOverrides(['3:1=module:/abs/x.ts'])['3:1'].module, '/abs/x.ts');
    assert.equal(parseOverrides(['3:1=module:file:///abs/x.ts'])['3:1'].module, 'file:///abs/x.ts');
  });

  it('prints a plan back as flags with the module relative to here, which parse to the same overrides', () => {
    const overrides = { '11:4': { placement: 'worker' as const, parallelism: 2, module: path.resolve('examples/images/transforms.ts') } };
    const flags = overridesToFlags(overrides);
    assert.ok(flags.includes('--override 11:4=module:examples/images/transforms.ts'), flags.join(' '));
    assert.deepEqual(parseOverrides(flags.map((f) => f.replace(/^--override /, ''))), overrides);
  });
});
