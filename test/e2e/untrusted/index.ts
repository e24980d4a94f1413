/** Entry of the untrusted-workspace suite: code-server runs with Workspace Trust on, so the folder opens in Restricted Mode. */
import { runMochaIn } from '../mochaHost';

export function run(): Promise<void> {
  return runMochaIn(__dirname);
}
