// docs/performance.md: a server loads a heavy dependency only when a part that needs it is used, so a server that
// does not use it never pays its memory. The child reports the npm packages loaded after each step.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, requireBuiltCli } from '../client/helpers.js';

interface Report {
  server: string[];
  afterFirstCheck: string[];
  afterSqliteStore: string[];
  gatewayCommand: string[];
}

let report: Report;
beforeAll(async () => {
  requireBuiltCli(); // the child reads dist/
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      [join(ROOT, 'test/fixtures/loaded-packages.mjs')],
      { timeout: 30_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
    ),
  );
  report = JSON.parse(out) as Report;
});

describe('heavy dependencies load when they are used', () => {
  it('a server with a JWT verifier made loads no JWT, OpenID, SQLite, PostgreSQL or Redis package', () => {
    for (const name of ['jose', 'openid-client', 'oauth4webapi', 'better-sqlite3', 'pg', 'redis'])
      expect(report.server).not.toContain(name);
    // The report does see packages: the schema validator is loaded with the server.
    expect(report.server).toContain('ajv');
  });

  it('jose arrives with the first token check, the SQLite driver with the first SQLite store', () => {
    expect(report.afterFirstCheck).toContain('jose');
    expect(report.afterFirstCheck).not.toContain('better-sqlite3');
    expect(report.afterSqliteStore).toContain('better-sqlite3');
    expect(report.afterSqliteStore).not.toContain('openid-client');
  });

  it('mrtr gateway starts without the passkey or PostgreSQL packages (each costs a start about 0.2–0.5 s of CPU)', () => {
    expect(report.gatewayCommand).toContain('yaml'); // the gateway's own config reader: the report sees the command
    for (const name of ['@simplewebauthn/server', 'pg', 'redis'])
      expect(report.gatewayCommand).not.toContain(name);
  });
});
