/** What the CLI knows about itself, from Plumber's package.json (found above the running bundle). */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Where Plumber's documentation lives when package.json does not say. */
const HOMEPAGE = 'https://github.com/plumber-dev/plumber#readme';

/** Plumber's package.json fields the CLI prints, or 'unknown' version when it cannot be found. */
export function packageInfo(): { version: string; homepage: string } {
  let dir = __dirname;
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg)) {
      const json = JSON.parse(fs.readFileSync(pkg, 'utf8')) as { name?: string; version?: string; homepage?: string };
      if (json.name === 'plumber' && json.version) return { version: json.version, homepage: json.homepage ?? HOMEPAGE };
    }
    const parent = path.dirname(dir);
    if (parent === dir) return { version: 'unknown', homepage: HOMEPAGE };
    dir = parent;
  }
}

/** Plumber's version. */
export function version(): string {
  return packageInfo().version;
}
