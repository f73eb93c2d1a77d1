// The checks every runtime passes: a two-round MRTR flow with sealed state behind JWT auth, through the runtime's
// own HTTP server and `mcpHttp(...).fetch`. Rounds also cross runtimes: a state Node sealed opens on the runtime,
// and the other way round, because any instance may take any round.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeHeaderValue } from '../../src/protocol/index.js';
import { openStore, type SharedStore } from '../../src/stores/index.js';
import { type McpReply, META, parseReply } from '../helpers/mcp-http.js';
import { TestRedis } from '../helpers/redis-server.js';
import type { RuntimeChild } from './child-runtime.js';
import { fixtureApp } from './fixture-server.js';
import { greetAs2025Client } from './legacy-client.js';
import { accessToken } from './tokens.js';

/** Sends one HTTP request to a server and returns its answer. */
export type Send = (path: string, init: RequestInit) => Promise<Response>;

export const sendTo =
  (url: string): Send =>
  (path, init) =>
    fetch(new URL(path, url), init);

/** The same fixture in this Node process, through `mcpHttp(...).fetch` with no listener. */
export function nodeSender(replayStore?: SharedStore): Send {
  const app = fixtureApp(replayStore);
  return (path, init) => app.fetch(new Request(new URL(path, 'http://node.test'), init));
}

let nextId = 1;

/** A 2026-07-28 `tools/call` of the fixture's greet tool; `extra` carries the next round's answers and state. */
export function postGreet(
  send: Send,
  token: string | undefined,
  extra: Record<string, unknown> = {},
): Promise<Response> {
  const body = {
    jsonrpc: '2.0',
    id: nextId++,
    method: 'tools/call',
    params: { name: 'greet', arguments: {}, ...extra, _meta: META },
  };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': encodeHeaderValue('greet'),
  };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  return send('/mcp', { method: 'POST', headers, body: JSON.stringify(body) });
}

/** The same call, its answer read and checked against the official schema. */
export async function callGreet(
  send: Send,
  token: string | undefined,
  extra: Record<string, unknown> = {},
): Promise<McpReply> {
  const response = await postGreet(send, token, extra);
  return parseReply('tools/call', {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    text: await response.text(),
  });
}

/** Round one: the server asks for a name and seals what it needs into requestState. */
export async function firstRound(send: Send, token: string): Promise<string> {
  const reply = await callGreet(send, token);
  expect(reply.status).toBe(200);
  const result = reply.response.result!;
  expect(result.resultType).toBe('input_required');
  expect(result.inputRequests).toMatchObject({
    name: { method: 'elicitation/create', params: { message: 'Your name?' } },
  });
  expect(typeof result.requestState).toBe('string');
  return result.requestState as string;
}

/** The second round's call: an answer to the question, and the state byte for byte. */
export const answerRound = (send: Send, token: string, requestState: string, name = 'Ada') =>
  callGreet(send, token, {
    inputResponses: { name: { action: 'accept', content: { text: name } } },
    requestState,
  });

/** Round two; resolves with the greeting's text. */
export async function secondRound(
  send: Send,
  token: string,
  requestState: string,
  name = 'Ada',
): Promise<string> {
  const reply = await answerRound(send, token, requestState, name);
  expect(reply.status).toBe(200);
  const result = reply.response.result!;
  expect(result.resultType).toBe('complete');
  return (result.content as Array<{ text: string }>)[0]!.text;
}

export interface RuntimeOptions {
  /** Also drive a 2025 client through the bridge. */
  legacyClient?: boolean;
  /** Run the runtime and Node on one Redis (REPLAY_STORE), and check a replay is caught across them. */
  redis?: boolean;
}

const INVALID_STATE = { code: -32602, message: 'Invalid params: invalid requestState' };

/** The checks, for one runtime started by `start` with extra environment variables. */
export function describeRuntime(
  runtime: string,
  start: (env: Record<string, string>) => Promise<RuntimeChild>,
  options: RuntimeOptions = {},
): void {
  describe(`the fixture server on ${runtime}, through mcpHttp(...).fetch`, () => {
    let child: RuntimeChild;
    let send: Send;
    let sendToNode: Send;
    let token: string;
    let redis: TestRedis | undefined;
    let nodeStore: SharedStore | undefined;
    beforeAll(async () => {
      if (options.redis) {
        redis = await TestRedis.start();
        nodeStore = await openStore(redis.url);
      }
      [child, token] = await Promise.all([start(redis ? { REPLAY_STORE: redis.url } : {}), accessToken()]);
      send = sendTo(child.url);
      sendToNode = nodeSender(nodeStore);
    });
    afterAll(async () => {
      await child?.stop();
      await nodeStore?.close();
      await redis?.stop();
    });

    it('answers 401 with a Bearer challenge to a call without a token', async () => {
      const response = await postGreet(send, undefined);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
    });

    it('runs both rounds: asks, then answers from the sealed state, for the token’s subject', async () => {
      const state = await firstRound(send, token);
      expect(await secondRound(send, token, state)).toBe(`hello Ada, from alice on ${runtime}`);
    });

    it('takes a round whose state Node sealed, and Node takes one it sealed (the same keys)', async () => {
      const fromNode = await firstRound(sendToNode, token);
      expect(await secondRound(send, token, fromNode)).toBe(`hello Ada, from alice on ${runtime}`);
      const fromRuntime = await firstRound(send, token);
      expect(await secondRound(sendToNode, token, fromRuntime)).toBe('hello Ada, from alice on node');
    });

    it('refuses a state that was altered, or presented by another subject', async () => {
      const state = await firstRound(send, token);
      const altered = `${state.slice(0, -2)}${state.endsWith('AA') ? 'AB' : 'AA'}`;
      expect((await answerRound(send, token, altered)).response.error).toMatchObject(INVALID_STATE);
      const other = await answerRound(send, await accessToken('mallory'), state);
      expect(other.response.error).toMatchObject(INVALID_STATE);
    });

    if (options.redis)
      it('with one Redis behind both, a state answered here is refused when replayed on Node', async () => {
        const state = await firstRound(send, token);
        await secondRound(send, token, state);
        expect((await answerRound(send, token, state, 'Eve')).response.error).toMatchObject(INVALID_STATE);
        expect((await answerRound(sendToNode, token, state, 'Eve')).response.error).toMatchObject(
          INVALID_STATE,
        );
      });
    else
      it('with the memory store, a replay is caught here but runs again on an instance with its own memory', async () => {
        const state = await firstRound(send, token);
        await secondRound(send, token, state);
        expect((await answerRound(send, token, state, 'Eve')).response.error).toMatchObject(INVALID_STATE);
        expect(await secondRound(sendToNode, token, state, 'Eve')).toBe('hello Eve, from alice on node');
      });

    if (options.legacyClient)
      it('serves a 2025 client (the SDK v1 Client) through the bridge: the question arrives as elicitation', async () => {
        const greeted = await greetAs2025Client(child.url, token, 'Grace');
        expect(greeted).toEqual({
          text: `hello Grace, from alice on ${runtime}`,
          protocolVersion: '2025-11-25',
          asked: ['Your name?'],
        });
      });
  });
}
