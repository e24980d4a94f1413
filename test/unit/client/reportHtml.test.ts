import * as assert from 'node:assert/strict';
import { makeNonce, reportHtml } from '../../../src/client/report/html';

describe('The report webview page', () => {
  const nonce = makeNonce();
  const html = reportHtml({ cspSource: 'https://file+.vscode-resource.vscode-cdn.net', nonce, scriptUri: 'https://x/report.js', styleUri: 'https://x/report.css', title: 'Plumber: <records>' });
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? '';

  it('allows nothing by default and only its own nonce-tagged script', () => {
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, new RegExp(`script-src 'nonce-${nonce}'`));
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal((html.match(/<script /g) ?? []).length, 1);
    assert.match(html, new RegExp(`<script nonce="${nonce}" src="https://x/report.js">`));
  });

  it('loads styles only from the extension, and escapes the title', () => {
    assert.match(csp, /style-src https:\/\/file\+\.vscode-resource\.vscode-cdn\.net/);
    assert.match(html, /<title>Plumber: &lt;records&gt;<\/title>/);
  });

  it('uses a fresh 32-character nonce each time', () => {
    assert.match(nonce, /^[A-Za-z0-9]{32}$/);
    assert.notEqual(makeNonce(), nonce);
  });
});
