// `mrtr serve --modern-only` turns the bridge off: a 2025 client's initialize is refused with the error that names
// the versions the server speaks, as before the bridge existed; without the flag the same request opens a session.
import { describe, expect, it } from 'vitest';
import { JSON_HEADERS } from '../helpers/legacy-wire.js';
import { serveCli } from '../helpers/serve-cli.js';

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
});

describe('mrtr serve --modern-only', () => {
  it('refuses a 2025 initialize with 400 naming the versions it speaks', async () => {
    const { url } = await serveCli(['--fixture', 'example', '--port', '0', '--modern-only']);
    const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: initialize });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(-32020);
    expect(body.error.message).toContain('This server speaks only MCP 2026-07-28');
  });

  it('without it, the same initialize opens a session', async () => {
    const { url } = await serveCli(['--fixture', 'example', '--port', '0']);
    const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: initialize });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeTruthy();
  });
});
