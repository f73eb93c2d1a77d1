// Issue 37, items 1 and 5, sent as an attacker sends them: the gateway as a process (dist/), in front of the official
// filesystem server, on the demo's share and config (`mrtr gateway demo`), with deny rules on privé/, Kunden/ and
// López/ added the way a person writes them. The filesystem server opens a name by its NFC equivalent, so a deny
// judged on another spelling would read the file; and a search from the share root would list secret/.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareGatewayDemo } from '../../src/cli/gateway-demo.js';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { type ServedCli, serveCli } from '../helpers/serve-cli.js';

const KEYS = `k1:${Buffer.alloc(32, 7).toString('base64url')}`;

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

let dir: string;
let share: string;
let gateway: ServedCli;

/** A deny on `name` and everything in it, in `path` and `paths`, as docs/gateway.md shows a CEL deny. */
const celDeny = (name: string) => {
  const at = `${share}/${name}`; // a temporary directory: no quote or backslash in it
  const inside = (v: string) => `(${v} == "${at}" || ${v}.startsWith("${at}/"))`;
  return `  - tools: ["files/*"]
    when: >-
      (has(args.path) && ${inside('args.path')}) ||
      (has(args.paths) && args.paths.exists(p, ${inside('p')}))
    deny: true
`;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-unicode-'));
  const demo = prepareGatewayDemo(dir);
  share = demo.share;
  for (const [folder, file, text] of [
    ['privé', 'lohn.txt', 'the private payroll'],
    ['Kunden', 'liste.csv', 'the customer list'],
    ['López', 'notas.txt', 'the notes of López'],
    ['café', 'menu.txt', 'the menu'],
  ] as const) {
    mkdirSync(join(share, folder));
    writeFileSync(join(share, folder, file), text);
  }
  // Deny rules as people write them: in NFC, and one literal in NFD (CEL's \u0301 escape).
  appendFileSync(demo.config, celDeny('privé') + celDeny('Kunden') + celDeny('Lo\\u0301pez'));
  const port = await freePort();
  gateway = await serveCli(
    [
      '--config',
      demo.config,
      '--port',
      String(port),
      '--tokens',
      demo.tokens,
      '--state-keys',
      KEYS,
      '--audit',
      `sqlite:${join(dir, 'audit.db')}`,
      '--audit-key-file',
      join(dir, 'audit-key'),
    ],
    'gateway',
  );
  // The filesystem server starts with the gateway (npx may be slow): the attacks begin once it has answered.
  await gateway.saidOnStderr('upstreams started:');
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const call = async (name: string, args: Record<string, unknown>): Promise<Loose> =>
  (
    await mcp(
      gateway.url,
      'tools/call',
      { name, arguments: args },
      { headers: { authorization: 'Bearer bob-dev-token' } },
    )
  ).response.result;

const SECRETS = ['the private payroll', 'the customer list', 'the notes of López', 'not for the agent'];
const leaks = (result: unknown) => SECRETS.filter((s) => JSON.stringify(result).includes(s));

describe('a path deny holds for every spelling the filesystem server opens (issue 37, item 1)', () => {
  it('the upstream does open other spellings: café asked in NFD reads the menu', async () => {
    const result = await call('files__read_text_file', { path: 'cafe\u0301/menu.txt' });
    expect(JSON.stringify(result)).toContain('the menu');
  }, 30_000);

  it.each([
    ['privé in NFD', 'prive\u0301/lohn.txt'],
    ['privé in NFC', 'privé/lohn.txt'],
    ['privé in NFD, absolute', '<share>/prive\u0301/lohn.txt'],
    ['Kunden with U+212A KELVIN SIGN', '\u212Aunden/liste.csv'],
    ['López in NFC, denied by a rule written in NFD', 'López/notas.txt'],
  ])(
    'read_text_file: %s is refused',
    async (_, spelling) => {
      const path = spelling.replace('<share>', share);
      const result = await call('files__read_text_file', { path });
      expect(result).toMatchObject({ isError: true });
      expect(leaks(result)).toEqual([]);
    },
    30_000,
  );

  it('read_multiple_files: an allowed path with privé in NFD is refused whole', async () => {
    const result = await call('files__read_multiple_files', {
      paths: ['public/hello.txt', 'prive\u0301/lohn.txt', '\u212Aunden/liste.csv'],
    });
    expect(result).toMatchObject({ isError: true });
    expect(leaks(result)).toEqual([]);
  }, 30_000);
});

describe("the demo's deny on secret/ holds for tools that descend into it (issue 37, item 5)", () => {
  it.each([
    ['search_files from the share root', 'files__search_files', { path: '.', pattern: 'key' }],
    ['search_files on the share, absolute', 'files__search_files', { path: '<share>', pattern: '*' }],
    ['list_directory_with_sizes of the share root', 'files__list_directory_with_sizes', { path: '.' }],
  ])(
    '%s is refused, naming no file under secret/',
    async (_, tool, args) => {
      const sent = { ...args, path: args.path === '<share>' ? share : args.path };
      const result = await call(tool, sent);
      expect(result).toMatchObject({ isError: true, content: [{ text: 'secret/ is not for agents' }] });
      expect(JSON.stringify(result)).not.toContain('key.txt');
    },
    30_000,
  );

  it('search_files beside secret/ still runs', async () => {
    const result = await call('files__search_files', { path: 'public', pattern: '*.txt' });
    expect(result.isError).toBeUndefined();
    expect(JSON.stringify(result)).toContain('hello.txt');
  }, 30_000);
});
