// The controls example server (examples/human-controls.ts) on a free port, with four people, a memory store and a
// TOTP file in a temporary folder — and a way to call its tools round by round.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { controlsServer } from '../../examples/human-controls.js';
import { DevTokens, parseDevTokens } from '../../src/auth/index.js';
import type { ControlEvent } from '../../src/controls/index.js';
import type { HttpEndpoint, RoundEvent, TaskOptions } from '../../src/server/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';

export const PEOPLE = {
  'alice-token': { sub: 'alice', name: 'Alice', roles: ['requester'] },
  'bob-token': { sub: 'bob', name: 'Bob', roles: ['approver'] },
  'carol-token': { sub: 'carol', name: 'Carol', roles: ['approver'] },
  'dave-token': { sub: 'dave', name: 'Dave', roles: [] },
};
export type Token = keyof typeof PEOPLE;

export interface Fixture {
  endpoint: HttpEndpoint;
  origin: string;
  store: MemoryStore;
  totpFile: string;
  events: ControlEvent[];
  /** Every round's event (the server's audit observer). */
  rounds: RoundEvent[];
  clock: { now: number };
  call(
    token: Token,
    name: string,
    args: Record<string, unknown>,
    round?: { requestState?: string; inputResponses?: Record<string, unknown> },
  ): Promise<CallReply>;
  api(
    token: Token | undefined,
    path: string,
    body?: unknown,
    extra?: Record<string, string>,
  ): Promise<{ status: number; json: Loose }>;
  close(): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: a test reads replies as loose JSON, checked by its expectations
type Loose = any;

export interface CallReply {
  status: number;
  result: Loose;
  error: Loose;
}

export interface ControlsFixtureOptions {
  fakeClock?: boolean;
  /** The controls' hold on a pending check (default here 0: tests that poll get "still waiting" at once). */
  pendingWaitMs?: number;
  /** The tasks extension's options. */
  tasks?: TaskOptions;
  /** Told every control event too (a webhook notifier). */
  onEvent?: (event: ControlEvent) => void;
  /** The host in the server's public URL (default 127.0.0.1; passkeys need a name: WebAuthn takes no IP address). */
  host?: 'localhost';
}

/** Every round's event, as the fixture's observer was told it (see `rounds` on the fixture). */
export type { RoundEvent };

export async function startControls(options: ControlsFixtureOptions = {}): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-controls-'));
  const port = await freePort();
  const origin = `http://${options.host ?? '127.0.0.1'}:${port}`;
  const clock = { now: Date.now() };
  const now = options.fakeClock ? () => clock.now : undefined;
  const store = new MemoryStore(now ? { now } : {});
  const events: ControlEvent[] = [];
  const rounds: RoundEvent[] = [];
  process.env.MRTR_STATE_KEYS ??= generateKeySpec();
  const totpFile = join(dir, 'totp.json');
  const server = controlsServer({
    tokens: new DevTokens(parseDevTokens(PEOPLE)),
    store,
    totpFile,
    resource: `${origin}/mcp`,
    onEvent: (e) => {
      events.push(e);
      options.onEvent?.(e);
    },
    ...(now ? { now } : {}),
    pendingWaitMs: options.pendingWaitMs ?? 0,
    ...(options.tasks ? { tasks: options.tasks } : {}),
    observers: [{ observe: (e) => void rounds.push(e) }],
  });
  const endpoint = await server
    .http({ port, logger: { info() {}, warn() {}, error() {} } as never })
    .listen();
  const url = endpoint.url;
  // The public origin people's browsers use (localhost for passkeys), on the address the server listens on.
  const o = options.host ? origin : new URL(url).origin;
  return {
    endpoint,
    origin: o,
    store,
    totpFile,
    events,
    rounds,
    clock,
    async call(token, name, args, round = {}) {
      const reply = await mcp(
        url,
        'tools/call',
        { name, arguments: args, ...round },
        { headers: { authorization: `Bearer ${token}` } },
      );
      return { status: reply.status, result: reply.response.result, error: reply.response.error };
    },
    async api(token, path, body, extra = {}) {
      const headers: Record<string, string> = { ...extra };
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${o}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers,
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      const text = await response.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
      return { status: response.status, json };
    },
    async close() {
      await endpoint.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function useControls(options: ControlsFixtureOptions = {}): Promise<Fixture> {
  return startControls(options).then((f) => {
    onTestFinished(() => f.close());
    return f;
  });
}

export const textOf = (r: CallReply): string => r.result?.content?.[0]?.text ?? '';
