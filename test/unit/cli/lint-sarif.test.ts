/**
 * `plumber lint --format sarif` against the SARIF 2.1.0 JSON schema (the copy @microsoft/jest-sarif
 * ships), with a real validator: what code scanning uploads must be a log it accepts.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import Ajv from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import schema from '@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json';
import { allRules } from '../../../src/engine/lints/catalog';
import { ROOT } from './bin';
import { lint } from './lintRun';

interface SarifLog {
  version: string;
  runs: Array<{
    tool: { driver: { name: string; version: string; informationUri: string; rules: Array<{ id: string; shortDescription: { text: string }; fullDescription: { text: string }; help: { text: string } }> } };
    results: Array<{
      ruleId: string;
      ruleIndex: number;
      level: string;
      message: { text: string };
      locations: Array<{ physicalLocation: { artifactLocation: { uri: string; uriBaseId: string }; region: { startLine: number; startColumn: number; endLine: number; endColumn: number } } }>;
    }>;
  }>;
}

function validator(): ReturnType<Ajv['compile']> {
  // The schema's language-tag pattern is not a valid Unicode-mode regular expression.
  const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false });
  addFormats(ajv);
  return ajv.compile(schema);
}

describe('plumber lint --format sarif', function () {
  this.timeout(60_000);

  it('writes a SARIF 2.1.0 log the schema accepts, with every rule, its help, and each result placed', async () => {
    const r = await lint(path.join(ROOT, 'test/fixtures/server/lints'), '--format', 'sarif', '--cores', '8', 'input.ts', 'clean.ts');
    assert.equal(r.code, 1);
    const log = JSON.parse(r.stdout) as SarifLog;
    const validate = validator();
    assert.ok(validate(log), JSON.stringify(validate.errors, null, 2));

    const driver = log.runs[0]!.tool.driver;
    assert.equal(driver.name, 'Plumber');
    assert.match(driver.version, /^\d+\.\d+\.\d+/);
    assert.match(driver.informationUri, /^https:\/\//);
    assert.deepEqual(
      driver.rules.map((x) => x.id),
      allRules().map((x) => x.id),
    );
    for (const rule of driver.rules) {
      assert.ok(rule.shortDescription.text.length > 10 && rule.fullDescription.text.length > rule.shortDescription.text.length, rule.id);
      assert.equal(rule.help.text, rule.fullDescription.text);
    }

    const results = log.runs[0]!.results;
    assert.equal(results.length, 18);
    for (const res of results) assert.equal(driver.rules[res.ruleIndex]!.id, res.ruleId);
    const first = results[0]!;
    assert.equal(first.ruleId, 'plumber/cache-after-random');
    assert.equal(first.level, 'warning');
    assert.deepEqual(first.locations[0]!.physicalLocation, { artifactLocation: { uri: 'input.ts', uriBaseId: '%SRCROOT%' }, region: { startLine: 11, startColumn: 54, endLine: 11, endColumn: 59 } });
    assert.deepEqual([...new Set(results.map((x) => x.level))].sort(), ['note', 'warning']);
  });

  it('has a validator that rejects what SARIF does not allow', () => {
    const validate = validator();
    const broken = { version: '2.1.0', runs: [{ tool: { driver: { name: 'Plumber' } }, results: [{ ruleId: 'x', level: 'information', message: { text: 'm' } }] }] };
    assert.equal(validate(broken), false);
    assert.ok(validate.errors!.some((e) => e.instancePath.endsWith('/level')));
  });
});
