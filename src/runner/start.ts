/**
 * The runner process's entry: loads the runner's bundle (main.js beside it) past the TypeScript
 * loader's hook, which a file of its size would make slow down the user's typed-array code for the
 * whole run (unhooked.ts says how). This entry stays small enough that the loader's scan of it
 * changes nothing.
 */
import * as path from 'node:path';
import { requireUnhooked } from './unhooked';

requireUnhooked(path.join(__dirname, 'main.js'));
