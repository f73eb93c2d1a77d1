// The gateway in front of the most-installed MCP server, as people run it: `mrtr gateway` as a process, the official
// filesystem server from npm as its stdio upstream, dev tokens, a SQLite replay store and audit trail. Each control
// of the config is tried the way a caller would — and the ways a caller would try to get around it.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { type ServedCli, serveCli } from '../helpers/serve-cli.js';

const require = createRequire(import.meta.url);
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const KEYS = `k1:${Buffer.alloc(32, 9).toString('base64url')}`;

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

let dir: string;
let share: string;
let gateway: ServedCli;
const as = (who: string) => ({ headers: { authorization: `Bearer ${who}-dev-token` } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-fs-'));
  share = join(dir, 'share');
  mkdirSync(join(share, 'public'), { recursive: true });
  mkdirSync(join(share, 'secret'), { recursive: true });
  writeFileSync(join(share, 'public', 'hello.txt'), 'hello from the share');
  writeFileSync(join(share, 'secret', 'key.txt'), 'the secret');
  writeFileSync(
    join(dir, 'tokens.json'),
    JSON.stringify({
      'alice-dev-token': { sub: 'alice', roles: ['requester'] },
      'bob-dev-token': { sub: 'bob', roles: ['approver'] },
      'mallory-dev-token': { sub: 'mallory', roles: [] },
    }),
  );
  writeFileSync(
    join(dir, 'gateway.yaml'),
    `upstreams:
  - name: files
    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(FILESYSTEM)}, ${JSON.stringify(share)}]
    cwd: ${JSON.stringify(share)}
rules:
  - tools: ["files/read_*", "files/list_*"]
    roles: ["*"]
  - tools: ["files/write_file"]
    roles: [requester]
    require: [consent]
  - tools: ["files/move_file"]
    roles: [requester]
    require: [approval]
    approval: { role: approver, approvals: 1 }
  - tools: ["files/*"]
    when: 'has(args.path) && args.path.startsWith(${JSON.stringify(`${share}/secret`)})'
    deny: true
`,
  );
  const port = await freePort();
  gateway = await serveCli(
    [
      '--config',
      join(dir, 'gateway.yaml'),
      '--port',
      String(port),
      '--tokens',
      join(dir, 'tokens.json'),
      '--state-keys',
      KEYS,
      '--store',
      `sqlite:${join(dir, 'replay.db')}`,
      '--audit',
      `sqlite:${join(dir, 'audit.db')}`,
      '--audit-key-file',
      join(dir, 'audit-key'),
    ],
    'gateway',
  );
  // The filesystem server starts with the gateway (npx may be slow): the tests begin once it has answered.
  await gateway.saidOnStderr('upstreams started:');
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const names = async (who: string) =>
  ((await mcp(gateway.url, 'tools/list', {}, as(who))).response.result as Loose).tools.map(
    (t: Loose) => t.name,
  );
const call = (
  who: string,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => mcp(gateway.url, 'tools/call', { name, arguments: args, ...extra }, as(who));

describe('mrtr gateway in front of @modelcontextprotocol/server-filesystem', () => {
  it('lists each caller only the tools a rule lets them call, under <upstream>__<tool>', async () => {
    const alice = await names('alice');
    expect(alice).toContain('files__read_text_file');
    expect(alice).toContain('files__write_file');
    expect(alice).toContain('files__move_file');
    expect(alice).not.toContain('files__create_directory'); // no rule allows it
    const mallory = await names('mallory');
    expect(mallory).toContain('files__read_text_file');
    expect(mallory).not.toContain('files__write_file');
  });

  it('passes an allowed call through and answers with the upstream result', async () => {
    const reply = await call('mallory', 'files__read_text_file', { path: join(share, 'public/hello.txt') });
    expect(reply.response.result).toMatchObject({ content: [{ text: 'hello from the share' }] });
  });

  it('answers a hidden tool exactly as an unknown one', async () => {
    const hidden = await call('mallory', 'files__write_file', { path: join(share, 'x'), content: 'x' });
    const unknown = await call('mallory', 'files__no_such_tool', { path: join(share, 'x'), content: 'x' });
    expect(hidden.status).toBe(unknown.status);
    expect(
      JSON.stringify(hidden.response.error ?? hidden.response.result).replaceAll('write_file', 'T'),
    ).toBe(JSON.stringify(unknown.response.error ?? unknown.response.result).replaceAll('no_such_tool', 'T'));
  });

  it.each([
    ['the plain path', 'secret/key.txt'],
    ['a dot-dot spelling', 'public/../secret/key.txt'],
    ['a double slash', '/secret//key.txt'],
    ['a dot segment', '/./secret/key.txt'],
  ])('denies %s of a path under the denied directory', async (_, spelling) => {
    const path = spelling.startsWith('/') ? `${share}${spelling}` : spelling;
    const reply = await call('mallory', 'files__read_text_file', { path });
    expect(reply.response.result).toMatchObject({ isError: true });
    expect(JSON.stringify(reply.response.result)).not.toContain('the secret');
  });

  it('asks consent to the exact write before the upstream hears of it; a yes writes the file', async () => {
    const path = join(share, 'public/new.txt');
    const first = (await call('alice', 'files__write_file', { path, content: 'v1' })).response
      .result as Loose;
    expect(first.resultType).toBe('input_required');
    const consent = Object.values(first.inputRequests)[0] as Loose;
    expect(consent.params.message).toContain('write_file');
    expect(consent.params.message).toContain(path);
    expect(() => readFileSync(path)).toThrow();
    const key = Object.keys(first.inputRequests)[0] as string;
    const done = (
      await call(
        'alice',
        'files__write_file',
        { path, content: 'v1' },
        {
          requestState: first.requestState,
          inputResponses: { [key]: { action: 'accept', content: { confirm: true } } },
        },
      )
    ).response.result as Loose;
    expect(done).toMatchObject({ resultType: 'complete' });
    expect(readFileSync(path, 'utf8')).toBe('v1');
  });

  it('refuses a yes carried to other arguments; a replayed final round does not write again', async () => {
    const path = join(share, 'public/swap.txt');
    const first = (await call('alice', 'files__write_file', { path, content: 'agreed' })).response
      .result as Loose;
    const key = Object.keys(first.inputRequests)[0] as string;
    const yes = { [key]: { action: 'accept', content: { confirm: true } } };
    const swapped = await call(
      'alice',
      'files__write_file',
      { path, content: 'evil' },
      {
        requestState: first.requestState,
        inputResponses: yes,
      },
    );
    expect(swapped.response.error).toMatchObject({ code: -32602 });
    expect(() => readFileSync(path)).toThrow();
    const done = await call(
      'alice',
      'files__write_file',
      { path, content: 'agreed' },
      {
        requestState: first.requestState,
        inputResponses: yes,
      },
    );
    expect(done.response.result).toMatchObject({ resultType: 'complete' });
    expect(readFileSync(path, 'utf8')).toBe('agreed');
    // Someone changes the file; the same final round again gets the recorded answer, and the upstream is not called.
    writeFileSync(path, 'changed since');
    const replay = await call(
      'alice',
      'files__write_file',
      { path, content: 'agreed' },
      {
        requestState: first.requestState,
        inputResponses: yes,
      },
    );
    expect(replay.response.result).toEqual(done.response.result);
    expect(readFileSync(path, 'utf8')).toBe('changed since');
  });

  it("refuses another user presenting alice's state", async () => {
    const path = join(share, 'public/theirs.txt');
    const first = (await call('alice', 'files__write_file', { path, content: 'a' })).response.result as Loose;
    const key = Object.keys(first.inputRequests)[0] as string;
    const stolen = await call(
      'bob',
      'files__write_file',
      { path, content: 'a' },
      {
        requestState: first.requestState,
        inputResponses: { [key]: { action: 'accept', content: { confirm: true } } },
      },
    );
    // bob cannot even see write_file; with the state he learns nothing more.
    expect(stolen.response.error ?? stolen.response.result?.isError).toBeTruthy();
    expect(() => readFileSync(path)).toThrow();
  });

  it("holds a move for a second person's approval; the approver decides over the JSON API", async () => {
    const source = join(share, 'public/hello.txt');
    const destination = join(share, 'public/moved.txt');
    const args = { source, destination };
    const first = (await call('alice', 'files__move_file', args)).response.result as Loose;
    expect(first.resultType).toBe('input_required');
    const url = new URL((Object.values(first.inputRequests)[0] as Loose).params.url);
    const id = url.pathname.split('/')[3];
    // alice cannot approve her own request
    const self = await fetch(`${url.origin}/mrtr/approvals/${id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer alice-dev-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(self.status).toBeGreaterThanOrEqual(400);
    const vote = await fetch(`${url.origin}/mrtr/approvals/${id}`, {
      method: 'POST',
      headers: { authorization: 'Bearer bob-dev-token', 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', comment: 'fine' }),
    });
    expect(vote.status).toBe(200);
    const key = Object.keys(first.inputRequests)[0] as string;
    const done = (
      await call('alice', 'files__move_file', args, {
        requestState: first.requestState,
        inputResponses: { [key]: { action: 'accept' } },
      })
    ).response.result as Loose;
    expect(done).toMatchObject({ resultType: 'complete' });
    expect(readFileSync(destination, 'utf8')).toBe('hello from the share');
  });
});
