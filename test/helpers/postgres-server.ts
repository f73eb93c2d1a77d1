// A real PostgreSQL for tests: Debian's initdb and postgres on a free 127.0.0.1 port in a temp dir, started and
// removed by the test. PostgreSQL refuses to run as root, so as root the cluster belongs to `nobody` (runuser).
// Ready means the server said so on stderr (an explicit signal, no polling delay).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

const NOBODY = 65534;

/**
 * Debian installs initdb and postgres under /usr/lib/postgresql/<version>/bin, outside PATH: use PATH's when it has
 * them, else the newest installed version's.
 */
function pgBin(name: string): string {
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
const asRoot = process.getuid?.() === 0;
/** The command line, run as `nobody` when we are root. */
const asOwner = (command: string, args: string[]): [string, string[]] =>
  asRoot ? ['runuser', ['-u', 'nobody', '--', command, ...args]] : [command, args];

export class TestPostgres {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(): Promise<TestPostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'mrtr-pg-'));
    if (asRoot) chownSync(dir, NOBODY, NOBODY);
    const data = join(dir, 'data');
    const [cmd, args] = asOwner(pgBin('initdb'), [
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
    const init = spawnSync(cmd, args, { encoding: 'utf8' });
    if (init.status !== 0) throw new Error(`initdb failed (${init.status}): ${init.stderr}`);
    const pg = new TestPostgres(await freePort(), dir);
    await pg.run();
    return pg;
  }

  /** postgres://postgres@127.0.0.1:PORT/postgres */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private async run(): Promise<void> {
    const [cmd, args] = asOwner(pgBin('postgres'), [
      '-D',
      join(this.dir, 'data'),
      '-p',
      String(this.port),
      '-k',
      this.dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=20',
    ]);
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        if (/database system is ready to accept connections/.test(out)) {
          child.stderr!.off('data', onData);
          child.stderr!.resume();
          resolve();
        }
      };
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`postgres exited (${code}): ${out.slice(-800)}`)));
      child.once('error', reject);
    });
  }

  /** Run SQL with the psql command line, as an operator (or an attacker with database access) would. */
  psql(sql: string, database = 'postgres'): { status: number | null; stdout: string; stderr: string } {
    const url = `postgres://postgres@127.0.0.1:${this.port}/${database}`;
    const out = spawnSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', sql], {
      encoding: 'utf8',
    });
    return { status: out.status, stdout: out.stdout, stderr: out.stderr };
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // SIGINT is PostgreSQL's fast shutdown. runuser does not pass it on, so it goes to the postmaster itself,
      // whose pid is the first line of postmaster.pid.
      const pid = Number(readFileSync(join(this.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGINT');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
