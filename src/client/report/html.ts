/** The report webview's HTML shell: strict CSP with a nonce, assets through asWebviewUri. No vscode import. */

/** A fresh nonce for the one script the page may run. */
export function makeNonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < 32; i++) s += chars.charAt(Math.floor(Math.random() * chars.length));
  return s;
}

export interface ReportHtmlInputs {
  /** `webview.cspSource`. */
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
  title: string;
}

/**
 * The page: no inline script or style, only our script (by nonce) and stylesheet (by source);
 * the data arrives by postMessage, so nothing from a profile is ever parsed as HTML here.
 */
export function reportHtml(i: ReportHtmlInputs): string {
  const csp = ["default-src 'none'", `style-src ${i.cspSource}`, `img-src ${i.cspSource} data:`, `script-src 'nonce-${i.nonce}'`].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${i.styleUri}">
<title>${escapeHtml(i.title)}</title>
</head>
<body>
<main id="root"><p class="muted">Loading the report…</p></main>
<script nonce="${i.nonce}" src="${i.scriptUri}"></script>
</body>
</html>`;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
