// `mrtr serve --fixture example` as a real process with people of every console role, a SQLite replay store and a
// SQLite audit trail: what the console tests sign in to, call tools on, and attack.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditTrail, exportBundle, SqliteAuditReader, SqliteAuditSink } from '../../src/audit/index.js';
import { BearerAuth, DevTokens, parseDevTokens } from '../../src/auth/index.js';
import { exampleServer } from '../../src/cli/demo-servers/example.js';
import {
  ApprovalsPanel,
  AuditPanel,
  type ConsolePanel,
  FlowsPanel,
  type LiveLimits,
  OperatorConsole,
  parseConsoleRoles,
} from '../../src/console/index.js';
import type { ControlEvent } from '../../src/controls/index.js';
import { generateKeySpec } from '../../src/state/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { sessionCookie } from '../helpers/page-sessions.js';
import { serveCli } from '../helpers/serve-cli.js';

export const PEOPLE = {
  'alice-token': { sub: 'alice', name: 'Alice', roles: ['requester'] },
  'bob-token': { sub: 'bob', name: 'Bob', roles: ['approver'] },
  'erin-token': { sub: 'erin', name: 'Erin', roles: ['auditor'] },
  'carol-token': { sub: 'carol', name: 'Carol', roles: ['admin'] },
  'dave-token': { sub: 'dave', name: 'Dave', roles: [] },
  // Holds `ops`, which the fixture maps to the console's approver role: he may read the queue, but a request
  // for the role `approver` is not his to decide.
  'frank-token': { sub: 'frank', name: 'Frank', roles: ['ops'] },
};
export type Token = keyof typeof PEOPLE;

export interface ConsoleFixture {
  /** How it runs: `mrtr serve` in its own process, or the same parts put together in this one (mutants reach it). */
  kind: 'cli' | 'in-process';
  stop(): Promise<void>;
  /** The control events the server told (in process only: a child process's go to its stderr). */
  events: ControlEvent[] | undefined;
  /** The audit trail's verifier key (`mrtr audit verify --vkey`). */
  verifierKey: string;
  origin: string;
  dir: string;
  auditDb: string;
  /** A session cookie for a person, signed in once. */
  cookie(subject: string): Promise<string>;
  call(
    token: Token,
    name: string,
    args: Record<string, unknown>,
    round?: { requestState?: string; inputResponses?: Record<string, unknown> },
    // biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by each expectation
  ): Promise<any>;
}

export async function startConsole(extra: string[] = []): Promise<ConsoleFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-console-'));
  const tokens = join(dir, 'tokens.json');
  writeFileSync(tokens, JSON.stringify(PEOPLE));
  const port = await freePort();
  const auditDb = join(dir, 'audit.db');
  const served = await serveCli([
    '--fixture',
    'example',
    '--port',
    String(port),
    '--tokens',
    tokens,
    '--store',
    `sqlite:${join(dir, 'replay.db')}`,
    '--audit',
    `sqlite:${auditDb}`,
    '--totp',
    join(dir, 'totp.json'),
    '--console-role',
    'approver=approver,ops',
    ...extra,
  ]);
  // Without an audit key the server signs with a per-process key, and prints its verifier key at start-up.
  const vkey = /(mrtr-audit\+[0-9a-f]+\+[\w+/=]+)/.exec(served.stderr())?.[1] ?? '';
  return fixtureOn('cli', served.url, dir, auditDb, vkey, undefined, async () => {
    await served.stop();
    rmSync(dir, { recursive: true, force: true });
  });
}

/**
 * The same server as `startConsole`, put together here as console-option.ts does it: the console's own code runs in
 * the test's process, where mutation testing changes it.
 */
export async function startConsoleInProcess(
  options: { live?: LiveLimits; signIn?: boolean } = {},
): Promise<ConsoleFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-console-'));
  process.env.MRTR_STATE_KEYS ??= generateKeySpec();
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const auditDb = join(dir, 'audit.db');
  const trail = await AuditTrail.open(await SqliteAuditSink.open(auditDb));
  const reader = new SqliteAuditReader(auditDb);
  const roles = parseConsoleRoles(['approver=approver,ops']);
  if (typeof roles === 'string') throw new Error(roles);
  const panels: ConsolePanel[] = [
    new FlowsPanel(reader),
    new AuditPanel({ reader, verifierKeys: [trail.verifierKey], bundle: (r) => exportBundle(r) }),
  ];
  const operatorConsole = new OperatorConsole({
    panels,
    roles,
    ...(options.live ? { live: options.live } : {}),
  });
  const events: ControlEvent[] = [];
  const tokens = new DevTokens(parseDevTokens(PEOPLE));
  const store = new MemoryStore();
  const server = exampleServer(
    {
      auth: new BearerAuth({ verifier: tokens, resource: `${origin}/mcp` }),
      ...(options.signIn === false ? {} : { signIn: { devTokens: tokens } }),
      replayStore: store,
      observers: [trail, operatorConsole.observer],
    },
    {
      store,
      totpFile: join(dir, 'totp.json'),
      onControls: (controls) => {
        panels.unshift(new ApprovalsPanel(controls));
        controls.subscribe((event) => {
          events.push(event);
          operatorConsole.changed('approvals');
        });
      },
    },
  );
  operatorConsole.attach(server);
  const endpoint = await server
    .http({ port, logger: { info() {}, warn() {}, error() {} } as never })
    .listen();
  return fixtureOn('in-process', endpoint.url, dir, auditDb, trail.verifierKey, events, async () => {
    operatorConsole.close();
    await endpoint.close();
    await trail.close();
    await reader.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
}

function fixtureOn(
  kind: ConsoleFixture['kind'],
  url: string,
  dir: string,
  auditDb: string,
  verifierKey: string,
  events: ControlEvent[] | undefined,
  stop: () => Promise<void>,
): ConsoleFixture {
  const origin = new URL(url).origin;
  const cookies = new Map<string, string>();
  return {
    kind,
    stop,
    events,
    verifierKey,
    origin,
    dir,
    auditDb,
    async cookie(subject) {
      let c = cookies.get(subject);
      if (!c) {
        c = await sessionCookie(origin, `${subject}-token`);
        cookies.set(subject, c);
      }
      return c;
    },
    async call(token, name, args, round = {}) {
      const reply = await mcp(
        url,
        'tools/call',
        { name, arguments: args, ...round },
        { headers: { authorization: `Bearer ${token}` } },
      );
      return reply.response;
    },
  };
}

/** The id of the approval request a first round asked about (its URL-mode link names it). */
export const approvalIdOf = (reply: {
  result: { inputRequests: Record<string, { params: { url: string } }> };
}) => new URL(Object.values(reply.result.inputRequests)[0]!.params.url).pathname.split('/')[3]!;
