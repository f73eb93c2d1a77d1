// Requests the HTTP transport refuses before dispatch (401, 413, header mismatch, not JSON) are audit events too,
// and their refusal is sent only once the event is stored.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type AuditRecord, SqliteAuditReader, SqliteAuditSink } from '../../src/audit/index.js';
import { McpError } from '../../src/protocol/index.js';
import { META, mcp, rawPost } from '../helpers/mcp-http.js';
import { auditedServer, HeldSink, openTrail, tempDir } from './fixture.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const undo of cleanups.splice(0).reverse()) await undo();
});

async function setup() {
  const tmp = tempDir();
  cleanups.push(tmp.remove);
  const path = join(tmp.dir, 'audit.db');
  const sink = new HeldSink(await SqliteAuditSink.open(path));
  const trail = await openTrail(sink);
  cleanups.push(() => trail.close());
  const endpoint = await auditedServer(trail).listen({
    port: 0,
    maxBodyBytes: 2048,
    authenticate: (req) => {
      if (req.headers.authorization !== 'Bearer good') throw new McpError(-32600, 'bad token');
      return { subject: 'ada', issuer: 'https://issuer.test', clientId: 'cli' };
    },
  });
  cleanups.push(() => endpoint.close());
  const records = async (): Promise<AuditRecord[]> => {
    const reader = new SqliteAuditReader(path);
    try {
      return (await reader.events()).map((e) => JSON.parse(e.text) as AuditRecord);
    } finally {
      await reader.close();
    }
  };
  return { url: endpoint.url, records, sink };
}

const auth = { authorization: 'Bearer good' };
const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'delete_file',
};

describe('refusals by the HTTP transport', () => {
  it('records 401, header mismatch, 413 and unparseable bodies with their precise reasons', async () => {
    const { url, records } = await setup();
    const unauthorized = await mcp(url, 'tools/call', { name: 'delete_file', arguments: { path: '/a' } });
    expect(unauthorized.status).toBe(401);
    const mismatch = await mcp(
      url,
      'tools/call',
      { name: 'delete_file', arguments: { path: '/a' } },
      { headers: { ...auth, 'mcp-name': 'sign_in' } },
    );
    expect(mismatch.status).toBe(400);
    const tooLarge = await rawPost(url, JSON.stringify({ pad: 'x'.repeat(4000) }), { ...HEADERS, ...auth });
    expect(tooLarge.status).toBe(413);
    const notJson = await rawPost(url, '{nope', { ...HEADERS, ...auth });
    expect(notJson.status).toBe(400);
    const ok = await mcp(
      url,
      'tools/call',
      { name: 'delete_file', arguments: { path: '/a' } },
      { headers: auth },
    );
    expect(ok.status).toBe(200);
    const list = await mcp(url, 'tools/list', {}, { headers: { ...auth, 'mcp-method': 'tools/call' } });
    expect(list.status).toBe(400); // not a round: refused, but no event
    const [r1, r2, r3, r4, p5, r5, r6] = await records();
    // The one round that ran left its intent first, with the principal the transport established.
    expect(p5).toMatchObject({ outcome: 'proposed', principal: { sub: 'ada' } });
    // Checked before the body is read: the event names no method, target or arguments of a caller nobody knows.
    expect(r1).toMatchObject({
      outcome: 'refused',
      reason: 'unauthorized: bad token',
      decidedBy: 'http',
      method: '(unread)',
      target: null,
      arguments: null,
      principal: null,
    });
    expect(r2).toMatchObject({ outcome: 'refused', decidedBy: 'http', target: 'delete_file' });
    expect(r2!.reason).toMatch(/^header_mismatch: Header mismatch: Mcp-Name header value 'sign_in'/);
    expect(r3).toMatchObject({
      outcome: 'refused',
      reason: 'body_too_large',
      method: '(unread)',
      target: null,
    });
    expect(r4).toMatchObject({ outcome: 'refused', reason: 'parse_error', method: '(unread)' });
    expect(r5).toMatchObject({
      outcome: 'input_required',
      principal: { sub: 'ada', iss: 'https://issuer.test', clientId: 'cli' },
    });
    expect(r6).toBeUndefined();
  });

  it('records a refusal whose arguments nest past any record (a header mismatch with 20,000 levels) as what was wrong with them', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const path = join(tmp.dir, 'audit.db');
    const trail = await openTrail(await SqliteAuditSink.open(path));
    cleanups.push(() => trail.close());
    const endpoint = await auditedServer(trail).listen({ port: 0 });
    cleanups.push(() => endpoint.close());
    // Built as text: JSON.stringify of it would overflow the test's own stack.
    const deep = `${'['.repeat(20_000)}"leaf"${']'.repeat(20_000)}`;
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":${JSON.stringify(META)},"name":"delete_file","arguments":{"path":"/a","d":${deep}}}}`;
    const reply = await rawPost(endpoint.url, body, { ...HEADERS, 'mcp-name': 'sign_in' });
    expect(reply.status).toBe(400);
    const reader = new SqliteAuditReader(path);
    const events = (await reader.events()).map((e) => JSON.parse(e.text) as AuditRecord);
    await reader.close();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      outcome: 'refused',
      decidedBy: 'http',
      target: 'delete_file',
      arguments: { $refused: 'Invalid params: arguments nests deeper than 64 levels' },
    });
    expect(events[0]!.reason).toMatch(/^header_mismatch: /);
  });

  it('answers 500 instead of the refusal when its event cannot be stored', async () => {
    const { url, sink } = await setup();
    sink.failNext = new Error('disk full');
    const reply = await mcp(url, 'tools/call', { name: 'delete_file', arguments: { path: '/a' } });
    expect(reply.status).toBe(500);
    expect(reply.response.error).toMatchObject({
      code: -32603,
      message: 'Internal error while recording the refusal',
    });
  });
});

describe('refusals by the resource server (auth)', () => {
  it('records a missing or unknown bearer token and a missing scope with their stable reasons', async () => {
    const { BearerAuth, DevTokens, parseDevTokens } = await import('../../src/auth/index.js');
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const path = join(tmp.dir, 'audit.db');
    const trail = await openTrail(new HeldSink(await SqliteAuditSink.open(path)));
    cleanups.push(() => trail.close());
    const auth = new BearerAuth({
      verifier: new DevTokens(parseDevTokens({ 'ada-token': { sub: 'ada' } })),
      resource: 'http://127.0.0.1:1/mcp',
    });
    const endpoint = await auditedServer(trail, { auth }).listen({ port: 0 });
    cleanups.push(() => endpoint.close());
    const none = await mcp(endpoint.url, 'tools/call', { name: 'delete_file', arguments: { path: '/a' } });
    const unknown = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'delete_file', arguments: { path: '/a' } },
      { headers: { authorization: 'Bearer stolen' } },
    );
    expect([none.status, unknown.status]).toEqual([401, 401]);
    const reader = new SqliteAuditReader(path);
    const events = (await reader.events()).map((e) => JSON.parse(e.text) as AuditRecord);
    await reader.close();
    expect(events.map((e) => [e.outcome, e.reason, e.decidedBy, e.method])).toEqual([
      ['refused', 'unauthorized: no_token', 'http', '(unread)'],
      ['refused', 'unauthorized: unknown_token', 'http', '(unread)'],
    ]);
  });
});
