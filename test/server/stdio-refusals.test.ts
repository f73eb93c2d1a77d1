// Lines the stdio transport refuses before dispatch (too long, not JSON, not JSON-RPC) are told to the server's
// observers as refused events, with the environment's principal; the refusal is written once they have settled.
import { describe, expect, it } from 'vitest';
import { McpServer, type RoundEvent, text } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { deferred } from '../helpers/signals.js';
import { stdioPipes } from '../helpers/stdio-pipes.js';

const KEYS = Keyring.fromSpec(`k1:${Buffer.alloc(32, 9).toString('base64url')}`);
const quiet = { info() {}, warn() {}, error() {} };

describe('stdio refusals', () => {
  it('become refused events, and each refusal waits for the observer', async () => {
    const events: RoundEvent[] = [];
    const gate = deferred();
    const server = new McpServer({
      name: 'stdio-audit',
      version: '1',
      stateKeys: KEYS,
      logger: quiet,
      observers: [{ observe: (e) => gate.promise.then(() => void events.push(e)) }],
    }).tool({ name: 'ping', description: 'pong' }, () => text('pong'));
    const { input, output, messages } = stdioPipes();
    const done = server.stdio({ input, output, maxLineBytes: 64, principal: { subject: 'operator' } });
    input.write('{not json\n');
    input.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"pad":"${'x'.repeat(100)}"}}\n`);
    input.write('{"jsonrpc":"1.0","id":2}\n');
    input.end();
    await new Promise((resolve) => setImmediate(resolve));
    expect(messages).toEqual([]); // nothing is answered before it is recorded
    gate.resolve();
    await done;
    expect(events.map((e) => [e.outcome, e.reason, e.decidedBy, e.method, e.principal?.subject])).toEqual([
      ['refused', 'parse_error', 'stdio', '(unread)', 'operator'],
      ['refused', 'line_too_long', 'stdio', '(unread)', 'operator'],
      ['refused', 'invalid_message', 'stdio', '(unread)', 'operator'],
    ]);
    expect(messages.map((m) => (m.error as { code: number }).code)).toEqual([-32700, -32600, -32600]);
  });
});
