// A throwaway PostgreSQL for `--audit postgres`: Debian's initdb and postgres in a temp dir on a free 127.0.0.1 port,
// as `nobody` when run as root (PostgreSQL refuses root). Started and removed by the bench server child.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const asRoot = process.getuid?.() === 0;
const asOwner = (cmd, args) => (asRoot ? ['runuser', ['-u', 'nobody', '--', cmd, ...args]] : [cmd, args]);

// Debian installs initdb and postgres under /usr/lib/postgresql/<version>/bin, outside PATH.
function pgBin(name) {
  for (const dir of (process.env.PATH ?? '').split(':'))
    if (dir !== '' && existsSync(join(dir, name))) return join(dir, name);
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', name)))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  return versions[0] ? join(root, versions[0], 'bin', name) : name;
}

const freePort = () =>
  new Promise((done) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => done(port));
    });
  });

/** Resolves to { url, stop() } once the server said it accepts connections. */
export async function startPostgres() {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-bench-pg-'));
  if (asRoot) chownSync(dir, 65534, 65534);
  const data = join(dir, 'data');
  const [initCmd, initArgs] = asOwner(pgBin('initdb'), [
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const [cmd, args] = asOwner(pgBin('postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
  ]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise((ready, fail) => {
    let out = '';
    child.stderr.on('data', (c) => {
      out += c;
      if (/database system is ready to accept connections/.test(out)) ready();
    });
    child.once('exit', (code) => fail(new Error(`postgres exited (${code}): ${out.slice(-500)}`)));
  });
  const stop = () => {
    try {
      // runuser does not pass signals on: stop the postmaster by its pid (first line of postmaster.pid).
      process.kill(Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGKILL');
    } catch {}
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop };
}
