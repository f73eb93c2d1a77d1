// A tools/call sent without an id is a notification: it is acknowledged (202 over HTTP, silence over stdio) and the
// tool never runs — a message nobody can answer must not cause an effect nobody can see.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
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

describe('a tools/call without an id', () => {
  it('over HTTP gets 202 and never runs the tool; the same call with an id does', async () => {
    const runs: string[] = [];
    const endpoint = await counting(runs).listen();
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'effect',
    };
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
});
