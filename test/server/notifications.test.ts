// A tools/call sent without an id is a notification: it is acknowledged (202 over HTTP, silence over stdio) and the
// tool never runs — a message nobody can answer must not cause an effect nobody can see.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest } from '../../src/protocol/index.js';
import { McpServer, text } from '../../src/server/index.js';
import { META, rawPost } from '../helpers/mcp-http.js';

const quiet = { info() {}, warn() {}, error() {} };
const counting = (runs: string[]) =>
  new McpServer({ name: 'n', version: '1', logger: quiet }).tool(
    { name: 'effect', description: 'Counts' },
    () => {
      runs.push('ran');
      return text('done');
    },
  );
const notification = JSON.stringify({
  jsonrpc: '2.0',
  method: 'tools/call',
  params: { _meta: META, name: 'effect', arguments: {} },
});
const httpHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'effect',
};
// Raw JSON text: an `id` tucked under `__proto__` is an own `__proto__` key, so the message still has no id.
const idUnderProto = notification.replace('{"jsonrpc"', '{"__proto__":{"id":1},"jsonrpc"');
const nullId = notification.replace('{"jsonrpc"', '{"id":null,"jsonrpc"');

describe('a tools/call without an id', () => {
  it('over HTTP gets 202 and never runs the tool; the same call with an id does', async () => {
    const runs: string[] = [];
    const endpoint = await counting(runs).listen();
    const headers = httpHeaders;
    try {
      const ack = await rawPost(endpoint.url, notification, headers);
      expect(ack.status).toBe(202);
      expect(ack.text).toBe('');
      expect(runs).toEqual([]);
      const withId = await rawPost(
        endpoint.url,
        JSON.stringify({ ...JSON.parse(notification), id: 1 }),
        headers,
      );
      expect(withId.status).toBe(200);
      expect(runs).toEqual(['ran']);
    } finally {
      await endpoint.close();
    }
  });

  it('over stdio is answered with nothing and never runs the tool', async () => {
    const runs: string[] = [];
    const input = new PassThrough();
    const output = new PassThrough();
    const written: string[] = [];
    output.on('data', (chunk: Buffer) => written.push(chunk.toString('utf8')));
    const done = counting(runs).stdio({ input, output });
    input.end(`${notification}\n`);
    await done;
    expect(written).toEqual([]);
    expect(runs).toEqual([]);
  });

  it('over HTTP: an id hidden under "__proto__" is still no id (202, the tool never runs)', async () => {
    const runs: string[] = [];
    const endpoint = await counting(runs).listen();
    try {
      const ack = await rawPost(endpoint.url, idUnderProto, httpHeaders);
      expect(ack.status).toBe(202);
      expect(ack.text).toBe('');
      expect(runs).toEqual([]);
    } finally {
      await endpoint.close();
    }
  });

  it('with "id": null is an invalid request, over HTTP and stdio, and never runs the tool', async () => {
    const runs: string[] = [];
    const endpoint = await counting(runs).listen();
    try {
      const refused = await rawPost(endpoint.url, nullId, httpHeaders);
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.text)).toEqual({
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Invalid Request: id must be a string or an integer' },
      });
    } finally {
      await endpoint.close();
    }
    const input = new PassThrough();
    const output = new PassThrough();
    const written: string[] = [];
    output.on('data', (chunk: Buffer) => written.push(chunk.toString('utf8')));
    const done = counting(runs).stdio({ input, output });
    input.end(`${nullId}\n${idUnderProto}\n`);
    await done;
    expect(
      written
        .join('')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      {
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Invalid Request: id must be a string or an integer' },
      },
    ]);
    expect(runs).toEqual([]);
  });

  it('in-process (McpServer.core) is refused naming the missing id, and never runs the tool', async () => {
    const runs: string[] = [];
    const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
    // A custom transport that forgets to tell notifications from requests still cannot run a tool with one.
    const response = await counting(runs).core.handle(JSON.parse(notification) as JsonRpcRequest, env);
    expect(response).toEqual({
      jsonrpc: '2.0',
      error: { code: -32602, message: "Invalid params: (root) must have required property 'id'" },
    });
    expect(runs).toEqual([]);
  });
});
