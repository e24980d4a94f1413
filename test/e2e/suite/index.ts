/** Entry of the trusted-workspace suite (extensionTestsPath = out/test/e2e/suite/index). */
import { runMochaIn } from '../mochaHost';

export function run(): Promise<void> {
  return runMochaIn(__dirname);
}
