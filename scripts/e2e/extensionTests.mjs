// Runs an extension-host test suite through @vscode/test-electron's runTests, the entry VS Code's
// own docs use. Here `vscodeExecutablePath` is code.mjs, a `code`-like launcher over code-server and
// headless Chromium (Microsoft's download is unreachable on these machines, see
// /work/shared/E2E.md); with `desktop: true` (`npm run test:e2e -- --desktop`) runTests downloads
// desktop VS Code instead, on a developer's machine that can, and runs the very same suite in it.
import { runTests } from '@vscode/test-electron';
import { join } from 'node:path';
import { ROOT } from './codeServer.mjs';

/** The `code` binary runTests starts: code-server + Chromium behind VS Code's command line. */
export const CODE_LAUNCHER = join(ROOT, 'scripts/e2e/code.mjs');

/**
 * Resolves with the suite's exit code: 0 when every test passed.
 * @param {{ folder: string, extensionTestsPath: string, trust?: boolean, desktop?: boolean }} o
 *   trust: open the folder with Workspace Trust on (so untrusted). runTests always passes
 *   --disable-workspace-trust, which desktop VS Code obeys, so `trust` needs the launcher.
 */
export async function runSuite({ folder, extensionTestsPath, trust = false, desktop = false }) {
  if (trust && desktop) throw new Error('The untrusted suite needs Workspace Trust, which runTests turns off in desktop VS Code.');
  try {
    await runTests({
      vscodeExecutablePath: desktop ? undefined : CODE_LAUNCHER,
      version: desktop ? (process.env.PLUMBER_E2E_VSCODE_VERSION ?? 'stable') : undefined,
      extensionDevelopmentPath: ROOT,
      extensionTestsPath,
      // The folder comes last on the command line: code.mjs takes its last plain argument.
      launchArgs: [...(trust ? ['--trust'] : []), folder],
    });
    return 0;
  } catch (e) {
    // TestRunFailedError carries the exit code; anything else (a download that failed) is a 1.
    const code = /** @type {{ code?: number }} */ (e).code;
    if (typeof code !== 'number') console.error(`e2e: ${e instanceof Error ? e.message : String(e)}`);
    return typeof code === 'number' && code !== 0 ? code : 1;
  }
}
