import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { hover } from '../../../src/server/features/hover';
import { codeSpan, escapeMarkdown } from '../../../src/server/features/markdown';
import { Session } from '../../../src/server/session';
import { FIXTURES } from './helpers';

/** Markdown that a renderer would turn into a link, an image, HTML or an autolink, if unescaped. */
function liveMarkup(markdown: string): string[] {
  const found: string[] = [];
  if (/(^|[^\\])\[/.test(markdown)) found.push('a [ that can open a link or image');
  if (/(^|[^\\])</.test(markdown)) found.push('a < that can open HTML or an autolink');
  if (/https?:\/\//.test(markdown)) found.push('a bare URL GFM autolinks');
  if (/(^|[^\\])www\./.test(markdown)) found.push('a www. GFM autolinks');
  return found;
}

describe('Untrusted text in hovers', () => {
  it('shows a markdown link in a string literal as text, not as a live link', () => {
    const file = path.join(FIXTURES, 'project', 'untrusted.ts');
    const uri = pathToFileURL(file).href;
    const text = ["import { files } from 'plumber-data';", "export const evil = files('[x](https://e.co)');", "export const html = files('<img src=x>www.e.co');", ''].join('\n');
    const s = new Session(() => undefined);
    s.update(uri, 1, text);
    for (const line of [1, 2]) {
      const h = hover(s.views(uri), file, { line, character: 21 });
      assert.ok(h, `a hover on line ${line + 1}`);
      const value = (h.contents as { value: string }).value;
      assert.deepEqual(liveMarkup(value), [], value);
    }
    const first = (hover(s.views(uri), file, { line: 1, character: 21 })!.contents as { value: string }).value;
    assert.match(first, /^\*\*files\('\\\[x\\\]\(https\\:\/\/e\\\.co\)'\)\*\*/, 'the label shows all its characters, escaped');
  });

  it('escapes every character markdown gives meaning to, and keeps text on one line', () => {
    assert.equal(escapeMarkdown('[a](b) <i> *c* `d` a@b.co\nnext'), '\\[a\\](b) \\<i\\> \\*c\\* \\`d\\` a\\@b\\.co next');
    assert.equal(escapeMarkdown('map(decode)'), 'map(decode)', 'plain labels read as they are');
  });

  it('puts text in a code span that a backtick inside cannot close', () => {
    assert.equal(codeSpan('parallelism: 2'), '`parallelism: 2`');
    assert.equal(codeSpan('a ` [x](https://e.co) `'), '`` a ` [x](https://e.co) ` ``');
    assert.equal(codeSpan('``x``'), '``` ``x`` ```');
  });
});
