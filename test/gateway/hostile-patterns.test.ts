// A hostile upstream's regular expressions cannot freeze the gateway. Its tool schemas' `pattern` and
// `patternProperties` are matched by RE2 in linear time: a hostile argument is refused at once with the schema
// error, and another person's call goes on. A pattern RE2 cannot run withholds that one tool, with a log line that
// names the tool and the pattern. The hostile strings would backtrack for years: a test that finishes is the proof.
import { createServer } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { JsonObject } from '../../src/protocol/index.js';
import { startChangingUpstream, type UpstreamToolSpec } from './fixtures/changing-upstream.js';
import { type Loose, textOf, useGateway } from './fixtures/gateway-under-test.js';

/** A common nested-quantifier e-mail pattern: 39 characters of `a` and one `!` backtrack for seconds. */
const EMAIL =
  '^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$';
const HOSTILE = `${'a'.repeat(5000)}!`;

const TOOLS: Record<string, UpstreamToolSpec> = {
  signup: {
    description: 'Sign a person up',
    inputSchema: { type: 'object', properties: { email: { type: 'string', pattern: EMAIL } } },
  },
  tags: {
    description: 'Tag addresses',
    inputSchema: {
      type: 'object',
      patternProperties: { [EMAIL]: { type: 'string' } },
      additionalProperties: false,
    },
  },
  echo: { description: 'Echo', inputSchema: { type: 'object' } },
};

const EVERYONE = `  - tools: ["up/*"]
    roles: ["*"]
`;

async function useUpstream(tools: Record<string, UpstreamToolSpec>) {
  const up = await startChangingUpstream(tools);
  onTestFinished(() => up.close());
  return up;
}

/**
 * An upstream that lists the given input schemas for its tools: a proxy in front of a real one that rewrites its
 * tools/list answer (mrtr's own server would refuse such schemas when the tool is registered).
 */
async function useListingSchemas(schemas: Record<string, JsonObject>) {
  const real = await useUpstream(
    Object.fromEntries(Object.keys(schemas).map((name) => [name, { description: name }])),
  );
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v;
      const forwarded = await fetch(real.url, {
        method: req.method ?? 'POST',
        headers,
        body: text || undefined,
      });
      const type = forwarded.headers.get('content-type') ?? 'application/json';
      let out = await forwarded.text();
      if (type.startsWith('application/json') && JSON.parse(text || 'null')?.method === 'tools/list') {
        const answer = JSON.parse(out) as Loose;
        for (const tool of answer.result?.tools ?? [])
          if (schemas[tool.name]) tool.inputSchema = schemas[tool.name];
        out = JSON.stringify(answer);
      }
      res.writeHead(forwarded.status, { 'content-type': type });
      res.end(out);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`, real };
}

describe("a hostile upstream's patterns", () => {
  it('refuses a 5000-character hostile argument at once, and another caller is served meanwhile', async () => {
    const up = await useUpstream(TOOLS);
    const g = await useGateway({ upstreamUrl: up.url, rules: EVERYONE });
    const [hostile, other] = await Promise.all([
      g.call('alice', 'up__signup', { email: HOSTILE }),
      g.call('bob', 'up__echo', { say: 'hi' }),
    ]);
    expect((hostile.response.result as Loose).isError).toBe(true);
    expect(textOf(hostile)).toMatch(/^Invalid arguments for tool up__signup: email: must match pattern/);
    expect(textOf(other)).toContain('echo ran with {"say":"hi"}');
    expect(up.callsOf('signup')).toBe(0);
    // The pattern still does its job for a real address.
    expect(textOf(await g.call('alice', 'up__signup', { email: 'ann.lee@example.com' }))).toContain(
      'signup ran',
    );
  });

  it('matches a hostile argument name against patternProperties at once', async () => {
    const up = await useUpstream(TOOLS);
    const g = await useGateway({ upstreamUrl: up.url, rules: EVERYONE });
    const [hostile, other] = await Promise.all([
      g.call('alice', 'up__tags', { [HOSTILE]: 'x' }),
      g.call('bob', 'up__echo', {}),
    ]);
    expect(textOf(hostile)).toMatch(
      /^Invalid arguments for tool up__tags: .*must NOT have additional properties/,
    );
    expect(textOf(other)).toContain('echo ran');
    expect(up.callsOf('tags')).toBe(0);
    expect(textOf(await g.call('alice', 'up__tags', { 'ann@example.com': 'x' }))).toContain('tags ran');
  });

  it('withholds a tool whose pattern needs backtracking, saying which tool and which pattern; the rest are served', async () => {
    const h = await useListingSchemas({
      look: { type: 'object', properties: { q: { type: 'string', pattern: '(?=x)' } } },
      backref: { type: 'object', patternProperties: { '(a)\\1': { type: 'string' } } },
      echo: { type: 'object' },
    });
    const log: string[] = [];
    const g = await useGateway({ upstreamUrl: h.url, rules: EVERYONE, log: (line) => log.push(line) });
    expect(await g.names('alice')).toEqual(['up__echo']);
    expect(log).toContainEqual(
      expect.stringMatching(/^upstream up: tool look withheld: .*pattern "\(\?=x\)" is refused: RE2/),
    );
    expect(log).toContainEqual(
      expect.stringMatching(/^upstream up: tool backref withheld: .*pattern "\(a\)\\\\1" is refused: RE2/),
    );
    const call = await g.call('alice', 'up__look', { q: 'x' });
    expect(JSON.stringify(call.response)).not.toContain('look ran');
    expect(h.real.callsOf('look')).toBe(0);
  });
});
