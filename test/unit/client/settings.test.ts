import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KNOB_RANGES } from '../../../src/shared/knobs';
import { DEFAULT_SETTINGS, RESTRICTED_SETTINGS, SETTING_SPECS, TRACE_SETTING, defaultOf, normalizeSettings } from '../../../src/shared/settings';
import { PLAN_FLAGS, runBudgetFlags } from '../../../src/cli/diagnoseRun';
import { parseArgs } from '../../../src/cli/args';
import { DEFAULT_BUDGET_SECONDS } from '../../../src/engine/diagnose';

interface ConfigRow {
  type: string;
  default: unknown;
  scope?: string;
  markdownDescription?: string;
  minimum?: number;
  maximum?: number;
  enum?: string[];
}
const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, ConfigRow> } };
  capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
};
const properties = pkg.contributes.configuration.properties;

/** Every leaf key of DEFAULT_SETTINGS, dotted. */
function leaves(obj: object, prefix = ''): string[] {
  return Object.entries(obj).flatMap(([k, v]) => (v && typeof v === 'object' && !Array.isArray(v) ? leaves(v as object, `${prefix}${k}.`) : [`${prefix}${k}`]));
}

describe('Settings', () => {
  it('describe every field of the Settings type exactly once', () => {
    assert.deepEqual(SETTING_SPECS.map((s) => s.key).sort(), leaves(DEFAULT_SETTINGS).sort());
  });

  it('match contributes.configuration in package.json key for key, with type, default, scope and description', () => {
    const expected = [...SETTING_SPECS.map((s) => `plumber.${s.key}`), 'plumber.trace.server'].sort();
    assert.deepEqual(Object.keys(properties).sort(), expected);
    for (const spec of SETTING_SPECS) {
      const row = properties[`plumber.${spec.key}`];
      assert.equal(row.type, spec.type, `${spec.key}: type`);
      assert.deepEqual(row.default, defaultOf(spec.key), `${spec.key}: default`);
      assert.equal(row.scope, spec.scope, `${spec.key}: scope`);
      assert.equal(row.markdownDescription, spec.markdownDescription, `${spec.key}: markdownDescription`);
      assert.equal(row.minimum, spec.minimum, `${spec.key}: minimum`);
      assert.equal(row.maximum, spec.maximum, `${spec.key}: maximum`);
    }
    const trace = properties['plumber.trace.server'];
    assert.deepEqual(trace.enum, [...TRACE_SETTING.enum]);
    assert.equal(trace.default, 'off');
    assert.ok(trace.scope && trace.markdownDescription);
  });

  it('let the editor plan like `plumber plan`: two passes, its run length and time budget, and a verified plan unless the person says otherwise', () => {
    const cli = runBudgetFlags(parseArgs(['x.ts'], PLAN_FLAGS, 'plan'));
    assert.deepEqual(DEFAULT_SETTINGS.plan, { passes: 2, verify: true, budgetSeconds: DEFAULT_BUDGET_SECONDS });
    assert.equal(DEFAULT_SETTINGS.profile.seconds, cli.seconds);
    assert.equal(properties['plumber.profile.seconds']!.default, cli.seconds);
    assert.equal(properties['plumber.plan.passes']!.default, 2);
    assert.equal(properties['plumber.plan.verify']!.default, true);
    assert.equal(properties['plumber.plan.budgetSeconds']!.default, DEFAULT_BUDGET_SECONDS);
    assert.deepEqual(normalizeSettings({ plan: { passes: 0, verify: 'yes', budgetSeconds: -1 } }).invalid, ['plumber.plan.passes', 'plumber.plan.verify', 'plumber.plan.budgetSeconds']);
    assert.deepEqual(normalizeSettings({ plan: { passes: 1, verify: false, budgetSeconds: 40 } }).settings.plan, { passes: 1, verify: false, budgetSeconds: 40 });
  });

  it('declare the runner settings as restricted in untrusted workspaces', () => {
    assert.equal(pkg.capabilities.untrustedWorkspaces.supported, 'limited');
    assert.deepEqual(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.sort(), [...RESTRICTED_SETTINGS].sort());
    assert.deepEqual([...RESTRICTED_SETTINGS].sort(), ['plumber.runner.nodeArgs', 'plumber.runner.nodePath']);
  });
});

describe('normalizeSettings', () => {
  it('gives the defaults for missing configuration and reports nothing', () => {
    assert.deepEqual(normalizeSettings(undefined), { settings: DEFAULT_SETTINGS, invalid: [] });
    assert.deepEqual(normalizeSettings({}), { settings: DEFAULT_SETTINGS, invalid: [] });
  });

  it('keeps values of the right type', () => {
    const { settings, invalid } = normalizeSettings({ codeLens: { operators: false }, profile: { seconds: 2.5, maxElements: 500 }, runner: { nodeArgs: ['--import', 'tsx'] } });
    assert.deepEqual(invalid, []);
    assert.equal(settings.codeLens.operators, false);
    assert.equal(settings.codeLens.enabled, true, 'siblings keep their defaults');
    assert.equal(settings.profile.seconds, 2.5);
    assert.equal(settings.profile.maxElements, 500);
    assert.deepEqual(settings.runner.nodeArgs, ['--import', 'tsx']);
  });

  it('falls back to the default for wrong types and out-of-range numbers, and names each key', () => {
    const { settings, invalid } = normalizeSettings({
      codeLens: { enabled: 'yes' },
      profile: { seconds: -1, maxElements: 2.5, timeoutSeconds: '60' },
      runner: { nodePath: 42, nodeArgs: ['--inspect', 3] },
      model: { cores: Number.NaN },
    });
    assert.deepEqual(invalid.sort(), [
      'plumber.codeLens.enabled',
      'plumber.model.cores',
      'plumber.profile.maxElements',
      'plumber.profile.seconds',
      'plumber.profile.timeoutSeconds',
      'plumber.runner.nodeArgs',
      'plumber.runner.nodePath',
    ]);
    assert.deepEqual(settings, DEFAULT_SETTINGS);
  });

  it('refuses a maxInFlight above the parallelism an override may set, as --max-in-flight does', () => {
    const { settings, invalid } = normalizeSettings({ model: { maxInFlight: KNOB_RANGES.parallelism.max + 1 } });
    assert.deepEqual(invalid, ['plumber.model.maxInFlight']);
    assert.equal(settings.model.maxInFlight, DEFAULT_SETTINGS.model.maxInFlight);
    assert.deepEqual(normalizeSettings({ model: { maxInFlight: KNOB_RANGES.parallelism.max } }).invalid, []);
  });

  it('never shares arrays with the defaults or the input', () => {
    const input = { runner: { nodeArgs: ['--a'] } };
    const { settings } = normalizeSettings(input);
    settings.runner.nodeArgs.push('--b');
    assert.deepEqual(input.runner.nodeArgs, ['--a']);
    assert.deepEqual(DEFAULT_SETTINGS.runner.nodeArgs, []);
  });
});
