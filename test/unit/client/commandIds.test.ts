import * as assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Commands } from '../../../src/shared/commands';
import { Commands as FromProtocol } from '../../../src/shared/protocol';

const ROOT = join(__dirname, '../../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { contributes: { commands: Array<{ command: string }> } };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('Command ids', () => {
  const declared = Object.values(Commands);

  it('declares exactly the commands package.json contributes, both ways', () => {
    const contributed = pkg.contributes.commands.map((c) => c.command);
    assert.deepEqual([...declared].sort(), [...contributed].sort());
    assert.equal(new Set(declared).size, declared.length, 'no id declared twice');
  });

  it('gives the same ids through the protocol module', () => {
    assert.equal(FromProtocol, Commands);
  });

  it('spells each id only in src/shared/commands.ts: client and server take the constant', () => {
    const spelled: string[] = [];
    for (const file of [...sourceFiles(join(ROOT, 'src/client')), ...sourceFiles(join(ROOT, 'src/server'))]) {
      const text = readFileSync(file, 'utf8');
      for (const id of declared) if (text.includes(`'${id}'`) || text.includes(`"${id}"`) || text.includes(`\`${id}\``)) spelled.push(`${relative(ROOT, file)}: ${id}`);
    }
    assert.deepEqual(spelled, []);
  });
});
