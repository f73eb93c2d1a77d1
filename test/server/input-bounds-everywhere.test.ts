// The front door's depth bound is the same on every way in: stdio, and the 2025 bridge (a 2025 client's arguments,
// its `_meta`, and its answer to an elicitation, which the bridge turns into the next round's inputResponses). The
// HTTP path of 2026 clients is tested in test/server/http-hardening.test.ts and test/audit/write-ahead.test.ts. Each
// test counts the effects of a tool whose schema drops extra keys: none may run on input nested past the limit.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { McpServer, text } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { LegacyWire } from '../helpers/legacy-wire.js';
import { META } from '../helpers/mcp-http.js';
import { stdioPipes } from '../helpers/stdio-pipes.js';

const KEYS = Keyring.fromSpec(`k1:${Buffer.alloc(32, 9).toString('base64url')}`);
const quiet = { info() {}, warn() {}, error() {} };

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) value = { d: value };
  return value;
}

const tooDeep = (where: string, member: string) => ({
  code: -32602,
  message: `Invalid params: ${where} nests deeper than 64 levels`,
  data: { limit: 'maxInputDepth', member, maxDepth: 64 },
});

/** `file` files a ticket at once; `file_after_yes` asks first. Both keep what they filed in `tickets`. */
function ticketServer() {
  const tickets: string[] = [];
  const input = z.object({ title: z.string() });
  const server = new McpServer({ name: 'bounds', version: '1', stateKeys: KEYS, logger: quiet })
    .tool({ name: 'file', description: 'Files a ticket', input }, ({ title }) => {
      tickets.push(title);
      return text(`filed ${title}`);
    })
    .tool(
      { name: 'file_after_yes', description: 'Asks, then files a ticket', input },
      async ({ title }, ctx) => {
        await ctx.ask.confirm(`File ${title}?`, { key: 'sure' });
        tickets.push(title);
        return text(`filed ${title}`);
      },
    );
  return { server, tickets };
}

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

describe('stdio', () => {
  it('refuses arguments and _meta nested past the limit with -32602 naming them; nothing is filed', async () => {
    const { server, tickets } = ticketServer();
    const { input, output, messages } = stdioPipes();
    const done = server.stdio({ input, output });
    const line = (id: number, params: Record<string, unknown>) =>
      input.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params })}\n`);
    line(1, { name: 'file', arguments: { title: 'a', extra: nested(1000) }, _meta: META });
    line(2, { name: 'file', arguments: { title: 'b' }, _meta: { ...META, extra: nested(1000) } });
    line(3, { name: 'file', arguments: { title: 'c', extra: nested(62) }, _meta: META });
    input.end();
    await done;
    const byId = new Map(messages.map((m) => [m.id, m]));
    expect(byId.get(1)?.error).toEqual(tooDeep('arguments', 'arguments'));
    expect(byId.get(2)?.error).toEqual(tooDeep('_meta', '_meta'));
    // Within the limit (64 levels in all), the same call runs.
    expect(byId.get(3)?.result).toMatchObject({ content: [{ type: 'text', text: 'filed c' }] });
    expect(tickets).toEqual(['c']);
  });
});

describe('the 2025 bridge', () => {
  async function bridged() {
    const { server, tickets } = ticketServer();
    const endpoint = await server.listen({ port: 0 });
    closing.push(() => endpoint.close());
    const wire = new LegacyWire(endpoint.url, '2025-11-25');
    await wire.initialize({ elicitation: {} });
    return { wire, tickets };
  }

  it("refuses a 2025 client's arguments and _meta nested past the limit the same way; nothing is filed", async () => {
    const { wire, tickets } = await bridged();
    // A tools/call is answered on its own event stream: the error is its one message.
    const answerTo = async (params: Record<string, unknown>, id: number) =>
      (await (await wire.stream('tools/call', params, id)).events.nextMessage())?.message;
    const args = await answerTo({ name: 'file', arguments: { title: 'a', extra: nested(1000) } }, 1);
    expect(args?.error).toEqual(tooDeep('arguments', 'arguments'));
    const meta = await answerTo(
      { name: 'file', arguments: { title: 'b' }, _meta: { extra: nested(1000) } },
      2,
    );
    expect(meta?.error).toEqual(tooDeep('_meta', '_meta'));
    expect(tickets).toEqual([]);
  });

  it("refuses a 2025 client's elicitation answer nested past the limit, naming the question; nothing is filed", async () => {
    const { wire, tickets } = await bridged();
    const { events } = await wire.stream('tools/call', { name: 'file_after_yes', arguments: { title: 'x' } });
    const question = await events.nextMessage();
    expect(question?.message.method).toBe('elicitation/create');
    await wire.answer(question?.message.id, {
      action: 'accept',
      content: { confirm: true, extra: nested(1000) },
    });
    const answer = await events.nextMessage();
    expect(answer?.message.error).toEqual(tooDeep('inputResponses["sure"]', 'inputResponses'));
    expect(tickets).toEqual([]);
  });
});
