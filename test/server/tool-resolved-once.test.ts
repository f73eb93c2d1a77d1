// A tools/call resolves its tool once: the entry the HTTP front found for the header parameters is the one the method
// runs and the guards read (GuardedRound.tool). An entry may prepare its arguments (prepareArguments): once per round,
// before the state binds them, so the guards judge and the handler gets that one object.
import { describe, expect, it, onTestFinished } from 'vitest';
import type { JsonObject, JsonRpcResponse } from '../../src/protocol/index.js';
import {
  type Catalog,
  type GuardedRound,
  McpServer,
  type RoundGuard,
  type ToolEntry,
  text,
  toolEntry,
} from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { META, mcp } from '../helpers/mcp-http.js';

const quiet = { info() {}, warn() {}, error() {} };
const KEYS = Keyring.fromSpec(`k1:${Buffer.alloc(32, 5).toString('base64url')}`);
const PATH_SCHEMA = { type: 'object', properties: { path: { type: 'string' } } };

/** A catalog of the given tools that counts its lookups by name. */
function countingCatalog(tools: ToolEntry[]) {
  const lookups: string[] = [];
  const byName = new Map(tools.map((t) => [t.definition.name, t]));
  const catalog: Catalog = {
    sameForEveryone: true,
    offers: () => ({ tools: true, prompts: false, resources: false, completions: false }),
    listTools: () => tools,
    findTool: (name) => {
      lookups.push(name);
      return byName.get(name);
    },
    listPrompts: () => [],
    findPrompt: () => undefined,
    listResources: () => [],
    listResourceTemplates: () => [],
    findResource: () => undefined,
    findResourceTemplate: () => undefined,
  };
  return { catalog, lookups };
}

/** `read`: echoes its arguments; its entry lower-cases `path` (throwing on a NUL), counting each preparation. */
function preparedTool(received: JsonObject[]) {
  const prepared: JsonObject[] = [];
  const entry: ToolEntry = {
    ...toolEntry({ name: 'read', input: PATH_SCHEMA }, (args: JsonObject) => {
      received.push(args);
      return text(JSON.stringify(args));
    }),
    prepareArguments: (args) => {
      prepared.push(args);
      const path = String(args.path ?? '');
      if (path.includes('\0')) throw new Error('argument "path" contains a NUL character');
      return { ...args, path: path.toLowerCase() };
    },
  };
  return { entry, prepared };
}

function serverWith(catalog: Catalog, guards: RoundGuard[]) {
  return new McpServer({ name: 'once', version: '1', stateKeys: KEYS, logger: quiet, catalog, guards });
}

async function listening(server: McpServer): Promise<string> {
  const endpoint = await server.listen({ host: '127.0.0.1', port: 0 });
  onTestFinished(() => endpoint.close({ graceMs: 0 }));
  return endpoint.url;
}

/** A guard that keeps every round it is asked about. */
const watching = (rounds: GuardedRound[]): RoundGuard => ({
  name: 'watching',
  ask(round) {
    rounds.push(round);
  },
});

describe('a tools/call resolves its tool once', () => {
  it('over HTTP: the entry found for the header parameters is the one the method runs', async () => {
    const received: JsonObject[] = [];
    const { entry } = preparedTool(received);
    const { catalog, lookups } = countingCatalog([entry]);
    const url = await listening(serverWith(catalog, []));

    const reply = await mcp(url, 'tools/call', { name: 'read', arguments: { path: 'A' } });
    expect(reply.response.result).toMatchObject({ content: [{ text: '{"path":"a"}' }] });
    expect(lookups).toEqual(['read']);

    const unknown = await mcp(url, 'tools/call', { name: 'nope', arguments: {} });
    expect(unknown.response.error).toMatchObject({ message: 'Unknown tool: nope' });
    expect(lookups).toEqual(['read', 'nope']);
  });

  it('two requests whose fronts both found their tool before either ran: each runs the one found for it', async () => {
    const { entry } = preparedTool([]);
    const { catalog, lookups } = countingCatalog([entry]);
    const server = serverWith(catalog, []);
    const envOf = () => ({ principal: undefined, signal: new AbortController().signal, notify() {} });
    const first = envOf();
    const second = envOf();
    const call = (id: number, path: string) => ({
      jsonrpc: '2.0' as const,
      id,
      method: 'tools/call',
      params: { name: 'read', arguments: { path }, _meta: META },
    });
    await server.core.headerParams('read', first);
    await server.core.headerParams('read', second);
    const answers = [
      await server.core.handle(call(1, 'A'), first),
      await server.core.handle(call(2, 'B'), second),
    ];
    expect(answers).toMatchObject([
      { result: { content: [{ text: '{"path":"a"}' }] } },
      { result: { content: [{ text: '{"path":"b"}' }] } },
    ]);
    expect(lookups).toEqual(['read', 'read']);
  });

  it('in process (no header check before it): the method looks it up, once', async () => {
    const { entry } = preparedTool([]);
    const { catalog, lookups } = countingCatalog([entry]);
    const server = serverWith(catalog, []);
    const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
    const response: JsonRpcResponse = await server.core.handle(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'read', arguments: { path: 'B' }, _meta: META },
      },
      env,
    );
    expect(response).toMatchObject({ result: { content: [{ text: '{"path":"b"}' }] } });
    expect(lookups).toEqual(['read']);
  });

  it('the guards read the resolved entry on the round, without a lookup of their own', async () => {
    const { entry } = preparedTool([]);
    const { catalog, lookups } = countingCatalog([entry]);
    const rounds: GuardedRound[] = [];
    const url = await listening(serverWith(catalog, [watching(rounds)]));
    await mcp(url, 'tools/call', { name: 'read', arguments: { path: 'C' } });
    expect(rounds).toHaveLength(1);
    expect(rounds[0]!.tool).toBe(entry);
    expect(lookups).toHaveLength(1);
    // What a guard may store of the round holds no entry (it carries the handler).
    expect(JSON.parse(JSON.stringify(rounds[0]))).not.toHaveProperty('tool');
  });
});

describe("an entry's prepareArguments", () => {
  it('runs once per round; the guards judge and the handler gets exactly what it returned', async () => {
    const received: JsonObject[] = [];
    const { entry, prepared } = preparedTool(received);
    const rounds: GuardedRound[] = [];
    const url = await listening(serverWith(countingCatalog([entry]).catalog, [watching(rounds)]));
    const reply = await mcp(url, 'tools/call', { name: 'read', arguments: { path: '/Srv/Report' } });
    expect(reply.response.result).toMatchObject({ content: [{ text: '{"path":"/srv/report"}' }] });
    expect(prepared).toEqual([{ path: '/Srv/Report' }]);
    expect(rounds[0]!.arguments).toEqual({ path: '/srv/report' });
    expect(received).toEqual([{ path: '/srv/report' }]);
    expect(JSON.stringify(received[0])).toBe(JSON.stringify(rounds[0]!.arguments));
  });

  it('that throws answers with a tool error naming the problem; no guard and no handler hears of the call', async () => {
    const received: JsonObject[] = [];
    const { entry } = preparedTool(received);
    const rounds: GuardedRound[] = [];
    const url = await listening(serverWith(countingCatalog([entry]).catalog, [watching(rounds)]));
    const reply = await mcp(url, 'tools/call', { name: 'read', arguments: { path: 'a\0b' } });
    expect(reply.response.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Invalid arguments: argument "path" contains a NUL character' }],
    });
    expect(rounds).toEqual([]);
    expect(received).toEqual([]);
  });
});
