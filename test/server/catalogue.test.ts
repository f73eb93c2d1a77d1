// Listing with cursors, completion, resource templates, caching hints and structured output.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpEndpoint, McpServer, text } from '../../src/server/index.js';
import { mcp } from '../helpers/mcp-http.js';

const quiet = { info() {}, warn() {}, error() {} };
let endpoint: HttpEndpoint;
let url: string;

beforeAll(async () => {
  const server = new McpServer({
    name: 'catalogue',
    version: '1',
    logger: quiet,
    pageSize: 2,
    validateResults: true,
  });
  for (const n of ['a', 'b', 'c', 'd', 'e'])
    server.tool({ name: `tool_${n}`, description: `Tool ${n}` }, () => text(n));
  server
    .tool(
      {
        name: 'weather',
        description: 'Structured weather',
        output: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] },
      },
      () => ({ content: [{ type: 'text', text: '21 C' }], structuredContent: { celsius: 21 } }),
    )
    .tool(
      {
        name: 'broken_weather',
        description: 'Breaks its own output schema',
        output: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] },
      },
      () => ({ content: [{ type: 'text', text: 'hot' }], structuredContent: { celsius: 'hot' } }),
    )
    .prompt(
      {
        name: 'review',
        description: 'Review code',
        arguments: [{ name: 'language', required: true }],
        complete: {
          language: (v) => ({
            values: ['python', 'perl', 'php', 'typescript'].filter((x) => x.startsWith(v)),
          }),
        },
      },
      (args) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Review ${args.language}` } }],
      }),
    )
    .resourceTemplate(
      {
        uriTemplate: 'repo://{owner}/{name}/readme',
        name: 'readme',
        description: 'A README',
        complete: { owner: (v, ctx) => ({ values: [`${v}-org`, `${ctx.name ?? 'x'}-user`] }) },
      },
      (uri, _ctx, vars) => ({ contents: [{ uri, text: `README of ${vars.owner}/${vars.name}` }] }),
    );
  endpoint = await server.listen({ port: 0 });
  url = endpoint.url;
});
afterAll(() => endpoint.close());

describe('registration', () => {
  const tool = (input: Record<string, unknown>) => () =>
    new McpServer({ name: 'x', version: '1', logger: quiet }).tool(
      { name: 'h', description: 'h', input },
      () => text(''),
    );
  it('refuses duplicate names and non-object argument schemas', () => {
    const server = new McpServer({ name: 'x', version: '1', logger: quiet }).tool(
      { name: 'once', description: 'd' },
      () => text(''),
    );
    expect(() => server.tool({ name: 'once', description: 'd' }, () => text(''))).toThrow(
      /already registered/,
    );
    expect(tool({ type: 'string' })).toThrow(/must have type "object"/);
  });
});

describe('catalogue', () => {
  it('pages tools/list with opaque cursors, in registration order', async () => {
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await mcp(url, 'tools/list', cursor === undefined ? {} : { cursor });
      const result = r.response.result as {
        tools: Array<{ name: string }>;
        nextCursor?: string;
        ttlMs: number;
        cacheScope: string;
      };
      expect(result.ttlMs).toBeGreaterThanOrEqual(0);
      expect(result.cacheScope).toBe('public');
      names.push(...result.tools.map((t) => t.name));
      cursor = result.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(4);
    expect(names).toEqual(['tool_a', 'tool_b', 'tool_c', 'tool_d', 'tool_e', 'weather', 'broken_weather']);
  });

  it('declares exactly what it serves in server/discover', async () => {
    const r = await mcp(url, 'server/discover');
    expect(r.response.result).toMatchObject({
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: {}, prompts: {}, resources: {}, completions: {}, logging: {} },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'catalogue', version: '1' } },
    });
  });

  it('completes prompt arguments and template variables', async () => {
    const prompt = await mcp(url, 'completion/complete', {
      ref: { type: 'ref/prompt', name: 'review' },
      argument: { name: 'language', value: 'p' },
    });
    expect(prompt.response.result?.completion).toEqual({ values: ['python', 'perl', 'php'] });
    const template = await mcp(url, 'completion/complete', {
      ref: { type: 'ref/resource', uri: 'repo://{owner}/{name}/readme' },
      argument: { name: 'owner', value: 'acme' },
      context: { arguments: { name: 'mrtr' } },
    });
    expect(template.response.result?.completion).toEqual({ values: ['acme-org', 'mrtr-user'] });
    const none = await mcp(url, 'completion/complete', {
      ref: { type: 'ref/prompt', name: 'review' },
      argument: { name: 'other', value: '' },
    });
    expect(none.response.result?.completion).toEqual({ values: [] });
    const unknown = await mcp(url, 'completion/complete', {
      ref: { type: 'ref/prompt', name: 'nope' },
      argument: { name: 'x', value: '' },
    });
    expect(unknown.response.error).toMatchObject({ code: -32602, message: 'Unknown prompt: nope' });
  });

  it('reads through a resource template with decoded variables', async () => {
    const r = await mcp(url, 'resources/read', { uri: 'repo://acme/mrtr%20core/readme' });
    expect(r.response.result).toMatchObject({
      contents: [{ text: 'README of acme/mrtr core' }],
      ttlMs: expect.any(Number),
      cacheScope: 'public',
    });
    const templates = await mcp(url, 'resources/templates/list');
    expect(templates.response.result?.resourceTemplates).toEqual([
      { uriTemplate: 'repo://{owner}/{name}/readme', name: 'readme', description: 'A README' },
    ]);
  });

  it('returns structured content that matches the outputSchema, and refuses content that does not', async () => {
    const ok = await mcp(url, 'tools/call', { name: 'weather' });
    expect(ok.response.result?.structuredContent).toEqual({ celsius: 21 });
    const broken = await mcp(url, 'tools/call', { name: 'broken_weather' });
    expect(broken.response.error).toEqual({
      code: -32603,
      message: 'Internal error while handling tools/call',
    });
  });
});
