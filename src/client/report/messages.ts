/** Messages between the report webview host and its page (shared with media/report/main.ts, so no vscode import). */
import type { ReportResult } from '../../shared/protocol';

/** Messages the host posts to the page. */
export type ToWebview = { type: 'report'; report: ReportResult } | { type: 'error'; message: string };
/** Messages the page posts back. */
export type FromWebview = { type: 'reveal'; opId: string } | { type: 'applyAllFixes' } | { type: 'profile' } | { type: 'ready' };
