// The spec's official example messages as fixtures: our validators accept each one, and our server handles the
// example requests and answers the example MRTR exchange.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeSchemaErrors, encodeHeaderValue, schemaValidator } from '../../src/protocol/index.js';
import { type HttpEndpoint, inputRequired, McpServer, text } from '../../src/server/index.js';
import { parseReply, rawPost } from '../helpers/mcp-http.js';

const ROOT = join(import.meta.dirname, '../fixtures/spec-examples');
const example = (definition: string, file: string) =>
  JSON.parse(readFileSync(join(ROOT, definition, file), 'utf8')) as Record<string, unknown>;

describe('official example messages', () => {
  for (const definition of readdirSync(ROOT)) {
    for (const file of readdirSync(join(ROOT, definition))) {
      it(`${definition}/${file} validates against our compiled schema`, () => {
        const validate = schemaValidator(definition);
        const ok = validate(example(definition, file));
        expect(ok, ok ? '' : describeSchemaErrors(validate)).toBe(true);
      });
    }
  }
});

describe('the example MRTR exchange, served', () => {
  const inputRequests = example('InputRequests', 'elicitation-and-sampling-input-requests.json');
  const inputResponses = example('InputResponses', 'elicitation-and-sampling-input-responses.json');
  let endpoint: HttpEndpoint;
  beforeAll(async () => {
    const server = new McpServer({ name: 'ExampleServer', version: '1.0.0', validateResults: true }).tool(
      {
        name: 'get_weather',
        description: 'Weather',
        input: { type: 'object', properties: { location: { type: 'string' } } },
      },
      (args, ctx) => {
        if (ctx.inputResponses.github_login && ctx.inputResponses.capital_of_france) {
          return text(`weather for ${String(args.location)} requested by octocat`);
        }
        return inputRequired({ inputRequests: inputRequests as never });
      },
    );
    endpoint = await server.listen({ port: 0 });
  });
  afterAll(() => endpoint.close());

  const send = (body: Record<string, unknown>) => {
    const params = body.params as Record<string, unknown>;
    return rawPost(endpoint.url, JSON.stringify(body), {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': String(body.method),
      'mcp-name': encodeHeaderValue(String(params.name)),
    }).then((raw) => parseReply(String(body.method), raw));
  };

  it('answers the example CallToolRequest with the example input requests, then completes with the example answers', async () => {
    const call = example('CallToolRequest', 'call-tool-request.json');
    call.params = {
      ...(call.params as object),
      _meta: {
        ...((call.params as Record<string, unknown>)._meta as object),
        'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, sampling: {} },
      },
    };
    const r1 = await send(call);
    expect(r1.response.id).toBe('call-tool-example');
    expect(r1.response.result?.inputRequests).toEqual(inputRequests);
    const retry = {
      ...call,
      id: 'call-tool-example-2',
      params: { ...(call.params as object), inputResponses, requestState: r1.response.result?.requestState },
    };
    const r2 = await send(retry);
    expect(r2.response.result?.content).toEqual([
      { type: 'text', text: 'weather for New York requested by octocat' },
    ]);
  });

  it('answers the example request as-is (empty capabilities) with -32021, never an undeclared request', async () => {
    const r = await send(example('CallToolRequest', 'call-tool-request.json'));
    expect(r.response.error?.code).toBe(-32021);
  });
});
