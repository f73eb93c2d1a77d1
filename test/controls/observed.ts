// A small server with the controls and an audit observer, for tests that read the rounds' audit events: `recovery`
// needs a step-up, `deploy` a four-eyes approval. `pendingWaitMs` is the controls' hold on a pending check; two of
// them given one `store` (Redis) and one `stateKeys` are two instances of a fleet.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { BearerAuth, DevTokens, parseDevTokens } from '../../src/auth/index.js';
import { type ControlEvent, HumanControls, totpSecretsFile } from '../../src/controls/index.js';
import { McpServer, type RoundEvent, type TaskOptions, text } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { MemoryStore, type SharedStore } from '../../src/stores/index.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { PEOPLE } from './fixture.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

export async function observedControls(o: {
  pendingWaitMs: number;
  tasks?: TaskOptions;
  store?: SharedStore;
  stateKeys?: string;
  totpFile?: string;
}) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-observed-'));
  const totpFile = o.totpFile ?? join(dir, 'totp.json');
  const store = o.store ?? new MemoryStore();
  const tokens = new DevTokens(parseDevTokens(PEOPLE));
  const rounds: RoundEvent[] = [];
  const events: ControlEvent[] = [];
  const listeners: Array<(e: ControlEvent) => void> = [];
  const roundListeners: Array<(e: RoundEvent) => void> = [];
  const server = new McpServer({
    name: 'observed',
    version: '1',
    stateKeys: o.stateKeys ?? generateKeySpec(),
    auth: new BearerAuth({ verifier: tokens, resource: `${origin}/mcp` }),
    signIn: { devTokens: tokens },
    replayStore: store,
    observers: [
      {
        observe: (e) => {
          rounds.push(e);
          for (const l of roundListeners) l(e);
        },
      },
    ],
    ...(o.tasks ? { tasks: o.tasks } : {}),
    logger: { info() {}, warn() {}, error() {} } as never,
  });
  const controls = new HumanControls({
    store,
    totp: totpSecretsFile(totpFile),
    pendingWaitMs: o.pendingWaitMs,
    onEvent: (e) => {
      events.push(e);
      for (const l of listeners) l(e);
    },
  }).attach(server);
  const waits = { maxRounds: 100 };
  server.tool({ name: 'recovery', description: 'x', ...waits }, async (_a, ctx) => {
    await controls.stepUp(ctx, { reason: 'Show the recovery codes' });
    return text('codes');
  });
  server.tool({ name: 'deploy', description: 'x', ...waits }, async (_a, ctx) => {
    await controls.approval(ctx, {
      role: 'approver',
      reason: 'release 81',
      effect: { tool: 'deploy', release: 81 },
    });
    return text('deployed');
  });
  const endpoint = await server.http({ port }).listen();
  onTestFinished(async () => {
    await endpoint.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    origin,
    totpFile,
    rounds,
    events,
    call: (name: string, round: Record<string, unknown> = {}) =>
      mcp(
        endpoint.url,
        'tools/call',
        { name, arguments: {}, ...round },
        { headers: { authorization: 'Bearer alice-token' } },
      ).then((r) => r.response.result as Record<string, Loose>),
    /** A request from a client that declares the tasks extension, as `token`'s holder (default alice). */
    withTasks: (method: string, params: Record<string, unknown>, token = 'alice-token') =>
      mcp(endpoint.url, method, params, {
        headers: { authorization: `Bearer ${token}` },
        meta: {
          'io.modelcontextprotocol/clientCapabilities': {
            elicitation: { form: {}, url: {} },
            extensions: { 'io.modelcontextprotocol/tasks': {} },
          },
        },
      }).then((r) => r.response as Loose),
    /** Resolves at the first round event that `match` accepts (from now on). */
    nextRound: (match: (e: RoundEvent) => boolean) =>
      new Promise<RoundEvent>((resolve) => roundListeners.push((e) => match(e) && resolve(e))),
    /** Resolves at the first control event that `match` accepts (from now on). */
    next: (match: (e: ControlEvent) => boolean) =>
      new Promise<ControlEvent>((resolve) => listeners.push((e) => match(e) && resolve(e))),
  };
}
