// `mrtr call` offers the working directory as its workspace root (roots/list), as the Inspector does, so it can
// call a tool that reads roots — check_workspace of the example server — on both protocol generations.
import { execFile } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer } from '../../src/cli/demo-servers/example.js';
import type { HttpEndpoint } from '../../src/server/index.js';
import { CLI, requireBuiltCli } from './helpers.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let endpoint: HttpEndpoint;
let cwd: string;
beforeAll(async () => {
  requireBuiltCli();
  cwd = realpathSync(mkdtempSync(join(tmpdir(), 'mrtr-roots-')));
  endpoint = await exampleServer().listen({ port: 0 });
});
afterAll(async () => {
  await endpoint?.close();
  rmSync(cwd, { recursive: true, force: true });
});

function mrtr(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], { cwd }, (_error, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

describe('mrtr call and workspace roots', () => {
  for (const protocol of [[], ['--protocol', '2025-11-25'], ['--protocol', '2025-06-18']]) {
    it(`answers roots/list with the working directory (${protocol[1] ?? '2026-07-28'})`, async () => {
      const r = await mrtr(['call', endpoint.url, 'check_workspace', ...protocol]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`Indexed 1 root(s), unchanged: ${pathToFileURL(cwd).href}\n`);
    });
  }

  it('--roots names other folders (relative to the working directory)', async () => {
    const r = await mrtr(['call', endpoint.url, 'check_workspace', '--roots', '/srv/a', '--roots', 'b']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      `Indexed 2 root(s), unchanged: file:///srv/a, ${pathToFileURL(join(cwd, 'b')).href}\n`,
    );
  });

  it('--roots none declares no roots capability: the server says what is missing', async () => {
    const r = await mrtr(['call', endpoint.url, 'check_workspace', '--roots', 'none']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/-32021: .*needs roots, which the client did not declare/);
  });

  it('--roots none with a folder, or an empty --roots, is a usage error', async () => {
    const both = await mrtr(['call', endpoint.url, 'check_workspace', '--roots', 'none', '--roots', 'x']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--roots none offers no roots: give it alone/);
    const empty = await mrtr(['call', endpoint.url, 'check_workspace', '--roots', '']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/--roots needs a folder \(or none\)/);
  });
});
