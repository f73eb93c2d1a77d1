// `mrtr serve --store`: the replay guard from the command line. Two real server processes sharing one SQLite file
// are two instances of a fleet: a state answered on one is refused on the other.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mcp } from '../helpers/mcp-http.js';
import { runCommand } from '../helpers/run-cli.js';
import { serveCli } from '../helpers/serve-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-serve-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEYS = `k1:${Buffer.alloc(32, 3).toString('base64url')}`;

const serve = (args: string[]) => serveCli(['--port', '0', '--state-keys', KEYS, ...args]);

describe('mrtr serve --store', () => {
  it('names a store it cannot use, and the syntax it wants', async () => {
    const out = await runCommand(
      process.execPath,
      ['dist/cli/main.js', 'serve', '--port', '0', '--store', 'mongodb://x'],
      {
        encoding: 'utf8',
        timeout: 25_000,
      },
    );
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(
      'mrtr serve: invalid --store: unknown store "mongodb://x": expected memory | sqlite:PATH | redis://HOST:PORT/DB',
    );
  });

  it('says at start-up that replays are not blocked when no store is given', async () => {
    const server = await serve([]);
    expect(server.stderr()).toContain('replays are not blocked: no --store');
  });

  it('two processes sharing a SQLite store: a state answered on one is replayed on the other and refused', async () => {
    const store = `sqlite:${join(dir, 'fleet.db')}`;
    const a = await serve(['--store', store]);
    const b = await serve(['--store', store]);
    expect(a.stderr()).toContain(`replay guard on ${store}: each requestState is single-use`);
    const first = await mcp(a.url, 'tools/call', { name: 'resolve_bug', arguments: { id: 7 } });
    const state = first.response.result!.requestState as string;
    const fixed = { resolution: { action: 'accept', content: { resolution: 'Fixed' } } };
    const onA = await mcp(a.url, 'tools/call', {
      name: 'resolve_bug',
      arguments: { id: 7 },
      requestState: state,
      inputResponses: fixed,
    });
    expect(onA.response.result!.resultType).toBe('input_required');
    const retryOnB = await mcp(b.url, 'tools/call', {
      name: 'resolve_bug',
      arguments: { id: 7 },
      requestState: state,
      inputResponses: fixed,
    });
    expect(JSON.stringify(retryOnB.response.result)).toBe(JSON.stringify(onA.response.result));
    const wontFix = { resolution: { action: 'accept', content: { resolution: "Won't fix" } } };
    const replayOnB = await mcp(b.url, 'tools/call', {
      name: 'resolve_bug',
      arguments: { id: 7 },
      requestState: state,
      inputResponses: wontFix,
    });
    expect(replayOnB.response.error).toEqual({
      code: -32602,
      message: 'Invalid params: invalid requestState',
    });
    // The log line travels through a pipe of its own: it may arrive after the response.
    await expect.poll(() => b.stderr()).toContain('"reason":"replayed"');
  });
});
