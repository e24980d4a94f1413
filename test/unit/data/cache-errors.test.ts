import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PipelineError, range } from 'plumber-data';

/** The built library, as a child process loads it (plain node, no tsx). */
const LIBRARY = require.resolve('plumber-data');

/** The user tests run as another account with: `nobody`, who owns none of the files made here. */
const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];

/** What a child's cache pass ended with: the error it threw, if any, and the names left in the directory. */
interface Outcome {
  error: { name: string; message: string } | null;
  files: string[];
}

/**
 * A script that runs `range(n)` through `body` (the map's fn, receiving x) into cache(path) and
 * prints the Outcome as its last line.
 */
function passScript(path: string, dir: string, n: number, body: string): string {
  return `
    const lib = require(${JSON.stringify(LIBRARY)});
    const fs = require('node:fs');
    (async () => {
      let error = null;
      try {
        await lib.range(${n}).map(async (x) => { ${body} }).cache(${JSON.stringify(path)}).toArray();
      } catch (e) {
        error = { name: e.name, message: e.message };
      }
      console.log(JSON.stringify({ error, files: fs.readdirSync(${JSON.stringify(dir)}).sort() }));
    })();`;
}

describe('plumber-data cache(path) when the disk refuses', function () {
  this.timeout(60_000);
  let dir: string;
  const children = new Set<ChildProcess>();

  /**
   * Runs `command` with `-e script` to the end and returns the Outcome its last JSON line holds;
   * `onLine` sees every line of its stdout as it comes.
   */
  async function run(command: string[], script: string, onLine?: (line: string, child: ChildProcess) => void): Promise<Outcome> {
    const child = spawn(command[0]!, [...command.slice(1), '-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(child);
    let last = '';
    let partial = '';
    let err = '';
    const line = (text: string): void => {
      if (text.startsWith('{')) last = text;
      onLine?.(text, child);
    };
    child.stdout!.on('data', (c: Buffer) => {
      const lines = (partial + c.toString()).split('\n');
      partial = lines.pop()!;
      lines.forEach(line);
    });
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    children.delete(child);
    if (partial !== '') line(partial);
    assert.equal(code, 0, `the child failed: ${err}`);
    assert.ok(last !== '', `the child printed no outcome: ${err}`);
    return JSON.parse(last) as Outcome;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'plumber-cache-errors-'));
  });
  afterEach(() => {
    for (const c of children) c.kill('SIGKILL');
    children.clear();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an existing cache file this process cannot read (EACCES), instead of recomputing it and renaming over its owner', async () => {
    // Tests run as root, whom chmod does not deny: the pass runs as nobody, in a directory nobody
    // may write (so renaming over the file is possible, as it was when the error read as "absent").
    chmodSync(dir, 0o777);
    const path = join(dir, 'train.cache');
    assert.deepEqual(await range(3).cache(path).toArray(), [0, 1, 2]);
    chmodSync(path, 0o600);
    const before = readFileSync(path);

    const r = await run([...NOBODY, process.execPath], passScript(path, dir, 5, 'return x;'));
    assert.equal(r.error?.name, 'PipelineError', JSON.stringify(r));
    assert.match(r.error.message, new RegExp(`^cache .*failed: cannot read the cache file ${path}: EACCES.*give it the permission, or give cache\\(\\) a path of its own\\.`));
    assert.deepEqual(r.files, ['train.cache']);
    assert.equal(statSync(path).uid, 0, 'the file changed owner');
    assert.deepEqual(readFileSync(path), before);
  });

  it('says a rename onto a non-empty directory failed, and leaves no temp file', async () => {
    const path = join(dir, 'train.cache');
    // The directory appears while the pass is being written, after the path was found free.
    const ds = range(5)
      .map((x) => {
        if (x === 3) {
          mkdirSync(path);
          writeFileSync(join(path, 'notes'), 'kept');
        }
        return x;
      })
      .cache(path);
    const err = await ds.toArray().then(
      () => assert.fail('the pass succeeded'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof PipelineError, String(err));
    assert.match(err.message, new RegExp(`cannot rename into place the cache file ${path}: E(ISDIR|NOTEMPTY|EXIST).*A directory is in the way.*Nothing was kept`));
    assert.deepEqual(readdirSync(dir), ['train.cache']);
    assert.deepEqual(readdirSync(path), ['notes']);
  });

  it("says a rename over another user's file in a sticky directory failed (EPERM), and leaves no temp file", async () => {
    // /tmp's rule: in a sticky directory only a file's owner may replace it. The pass runs as
    // nobody; root's file appears at the path while the pass is being written.
    chmodSync(dir, 0o1777);
    const path = join(dir, 'train.cache');
    const script = passScript(path, dir, 5, `if (x === 3) { console.log('half'); await new Promise((r) => process.stdin.once('data', r)); } return x;`);
    const r = await run([...NOBODY, process.execPath], script, (line, child) => {
      if (line !== 'half') return;
      writeFileSync(path, "root's notes");
      child.stdin!.end('go\n');
    });
    assert.equal(r.error?.name, 'PipelineError', JSON.stringify(r));
    assert.match(r.error.message, new RegExp(`cannot rename into place the cache file ${path}: EPERM.*only the owner of a file may replace it.*Nothing was kept`));
    assert.deepEqual(r.files, ['train.cache']);
    assert.equal(readFileSync(path, 'utf8'), "root's notes");
  });

  it('says the disk is full (ENOSPC) naming the file and the operator, and leaves no temp file', async () => {
    // A real full disk: a 256 KiB tmpfs mounted over the directory in a mount namespace of the
    // child's own (user namespace, so no mount rights are needed); it goes when the child exits.
    const script = passScript(join(dir, 'train.cache'), dir, 64, 'return Buffer.alloc(16384, 1);');
    const mountAndRun = ['unshare', '--user', '--map-root-user', '--mount', 'sh', '-c', 'mount -t tmpfs -o size=256k tmpfs "$0" && exec "$1" "$2" "$3"', dir, process.execPath];
    const r = await run(mountAndRun, script);
    assert.equal(r.error?.name, 'PipelineError', JSON.stringify(r));
    assert.match(r.error.message, new RegExp(`^cache .*failed: cannot write the cache file ${join(dir, 'train.cache')}: ENOSPC.*The disk is full.*Nothing was kept`));
    assert.deepEqual(r.files, []);
  });

  it('refuses a FIFO at the cache path instead of waiting on it forever', async () => {
    const path = join(dir, 'train.cache');
    execFileSync('mkfifo', [path]);
    await assert.rejects(range(3).cache(path).toArray(), (e: unknown) => e instanceof PipelineError && /is not a plumber-data cache file \(it is not a regular file\)/.test(e.message));
  });
});
