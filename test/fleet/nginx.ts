// Debian's nginx in front of the fleet, with the configuration docs/deploy.md shows: the test takes the block from
// the page (so the page and the test cannot drift apart), points it at this run's ports, and wraps it in the few
// main-context lines a throwaway, unprivileged nginx in a temp dir needs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const DEPLOY_DOC = join(import.meta.dirname, '../../docs/deploy.md');

/** The ```nginx block after the `<!-- fleet: nginx.conf -->` marker of docs/deploy.md. */
export function nginxBlockFromDoc(doc = readFileSync(DEPLOY_DOC, 'utf8')): string {
  const m = /<!-- fleet: nginx\.conf -->\s*```nginx\n([\s\S]*?)```/.exec(doc);
  if (!m) throw new Error('docs/deploy.md has no ```nginx block after <!-- fleet: nginx.conf -->');
  return m[1] as string;
}

/** The documented addresses (the balancer on 3000, instances on 3001…) replaced by this run's. */
export function pointAt(block: string, listen: number, instances: number[]): string {
  let out = block.replace('listen 127.0.0.1:3000;', `listen 127.0.0.1:${listen};`);
  for (const [i, port] of instances.entries())
    out = out.replace(`server 127.0.0.1:${3001 + i} `, `server 127.0.0.1:${port} `);
  if (out.includes(':3000;') || /127\.0\.0\.1:300[1-9] /.test(out))
    throw new Error(`the documented nginx block has more addresses than this test knows:\n${out}`);
  return out;
}

const nginxBinary = () => ['/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((p) => existsSync(p)) ?? 'nginx';

export class TestNginx {
  private constructor(private readonly dir: string) {}

  /** Starts nginx; it returns once its master process is running with the sockets bound (daemon mode). */
  static start(block: string): TestNginx {
    const dir = mkdtempSync(join(tmpdir(), 'mrtr-nginx-'));
    // As root, nginx's workers would run as `nobody` and could not read this temp dir: keep them root.
    const user = process.getuid?.() === 0 ? 'user root;' : '';
    const conf = `${user}
worker_processes 2;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${block}
}
`;
    writeFileSync(join(dir, 'nginx.conf'), conf);
    const out = spawnSync(nginxBinary(), ['-p', dir, '-c', join(dir, 'nginx.conf')], { encoding: 'utf8' });
    if (out.error || out.status !== 0)
      throw new Error(
        `nginx did not start (${out.error?.message ?? `exit ${out.status}`}): ${out.stderr}\n` +
          "install Debian's nginx package (apt-get install nginx); .ci/run does",
      );
    return new TestNginx(dir);
  }

  errorLog(): string {
    return readFileSync(join(this.dir, 'error.log'), 'utf8');
  }

  /** Fast shutdown, waiting for the master to be gone (`nginx -s stop` returns once signalled). */
  stop(): void {
    spawnSync(nginxBinary(), ['-p', this.dir, '-c', join(this.dir, 'nginx.conf'), '-s', 'stop']);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
