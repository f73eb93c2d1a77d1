// `mrtr gateway` as an operator meets it: the refusals of a config that cannot work (each names the file, the line
// and the key), `gateway check`, `gateway pin` from a fresh lock file to an accepted change, and a running gateway
// that withholds a tool its upstream changed under it (a rug pull) until the change is accepted and the gateway told
// with SIGHUP — and that keeps its policy when SIGHUP finds the config broken.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { mcp } from '../helpers/mcp-http.js';
import { runMrtr } from '../helpers/run-cli.js';
import { type ServedCli, serveCli } from '../helpers/serve-cli.js';

const DRIFTING = resolve('test/gateway/fixtures/drifting-server.mjs');
const KEYS = `k1:${Buffer.alloc(32, 4).toString('base64url')}`;

// biome-ignore lint/suspicious/noExplicitAny: replies are read as loose JSON, checked by the expectations
type Loose = any;

const dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-cli-'));
beforeAll(() => {
  writeFileSync(join(dir, 'tokens.json'), JSON.stringify({ 'alice-dev-token': { sub: 'alice', roles: [] } }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const mrtr = (args: string[]) => runMrtr(args, { timeout: 30_000 });

/** A config in front of the drifting fixture, whose tool x reads its description from `descriptionFile`. */
function config(name: string, rules: string, descriptionFile = join(dir, `${name}.description`)): string {
  if (!existsSync(descriptionFile)) writeFileSync(descriptionFile, 'Runs x');
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `upstreams:
  - name: files
    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(DRIFTING)}]
    env: { DESCRIPTION_FILE: ${JSON.stringify(descriptionFile)} }
rules:
${rules}`,
  );
  return file;
}

const EVERYONE = `  - tools: ["files/*"]
    roles: ["*"]
`;

describe('mrtr gateway refuses a config that cannot work, before serving anything', () => {
  it('without --config: exit 2 and the usage', async () => {
    const run = await mrtr(['gateway', '--port', '0']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^mrtr gateway: --config FILE is required\nusage: mrtr gateway --config FILE/);
  });

  it('--help after a subcommand (demo, pin, check) shows the usage, not "Unknown option"', async () => {
    for (const sub of ['demo', 'pin', 'check']) {
      const run = await mrtr(['gateway', sub, '--help']);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain('mrtr gateway demo [--port P] [--data DIR]');
    }
  });

  it('a bad rule: exit 2, FILE:LINE: naming the key', async () => {
    const file = config('bad-rule', `${EVERYONE}  - tools: ["files/x"]\n    rols: [admin]\n`);
    const run = await mrtr(['gateway', '--config', file, '--port', '0']);
    expect(run.status).toBe(2);
    expect(run.stderr.startsWith(`mrtr gateway: ${file}:9: rules[1]: unknown key "rols"`)).toBe(true);
    expect(run.stdout).toBe('');
  });

  it("a condition that does not type-check: exit 2, the rule's line", async () => {
    const file = config(
      'bad-cel',
      `${EVERYONE}  - tools: ["files/x"]\n    when: 'args.path.startsWith(1)'\n    deny: true\n`,
    );
    const run = await mrtr(['gateway', '--config', file, '--port', '0']);
    expect(run.status).toBe(2);
    expect(run.stderr.startsWith(`mrtr gateway: ${file}:9: rules[1].when: `)).toBe(true);
    expect(run.stderr).toContain('startsWith');
  });

  const NEEDS_SIGN_IN =
    "mrtr gateway: the rules require step_up or approval, which send people to the gateway's pages: give --tokens FILE, or --issuer URL --audience AUD with --client-id ID (people sign in there with OpenID)\n";

  it.each([
    ['step_up', '    require: [step_up]\n'],
    ['approval', '    require: [approval]\n    approval: { role: approver }\n'],
  ])('%s without --tokens or --issuer: exit 2, saying what to give', async (control, requirement) => {
    const file = config(`needs-pages-${control}`, `  - tools: ["files/x"]\n    roles: ["*"]\n${requirement}`);
    const run = await mrtr(['gateway', '--config', file, '--port', '0', '--state-keys', KEYS]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(NEEDS_SIGN_IN);
    expect(run.stdout).toBe('');
  });

  it('consent only, without --tokens or --issuer: exit 2, every rule is about who calls', async () => {
    const file = config('no-auth', `  - tools: ["files/x"]\n    roles: ["*"]\n    require: [consent]\n`);
    const run = await mrtr(['gateway', '--config', file, '--port', '0', '--state-keys', KEYS]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      'mrtr gateway: the gateway needs to know who calls: give --tokens FILE (development) or --issuer URL --audience AUD\n',
    );
    expect(run.stdout).toBe('');
  });

  it('approval with --issuer but no --client-id (the pages could not sign anyone in): exit 2, the same sentence', async () => {
    const file = config(
      'issuer-no-client',
      '  - tools: ["files/x"]\n    roles: ["*"]\n    require: [approval]\n    approval: { role: approver }\n',
    );
    const port = await freePort();
    const run = await mrtr([
      'gateway',
      '--config',
      file,
      '--port',
      String(port),
      '--issuer',
      'https://issuer.example',
      '--audience',
      `http://127.0.0.1:${port}/mcp`,
      '--state-keys',
      KEYS,
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(NEEDS_SIGN_IN);
  });

  it('gateway check prints the policy version; another rule is another version; a bad config is exit 2', async () => {
    const file = config('check', EVERYONE);
    const first = await mrtr(['gateway', 'check', '--config', file]);
    expect(first.status).toBe(0);
    const version = /^.*: 1 upstream, 1 rule, policy version ([\w-]{43})\n$/.exec(first.stdout)?.[1];
    expect(version, first.stdout).toBeDefined();
    expect((await mrtr(['gateway', 'check', '--config', file])).stdout).toContain(version);
    const other = config(
      'check-2',
      `${EVERYONE}  - tools: ["files/x"]\n    roles: ["*"]\n    require: [consent]\n`,
    );
    const second = await mrtr(['gateway', 'check', '--config', other]);
    expect(second.stdout).toContain('2 rules, policy version ');
    expect(second.stdout).not.toContain(version);
    const broken = await mrtr(['gateway', 'check', '--config', join(dir, 'bad-rule.yaml')]);
    expect(broken.status).toBe(2);
    expect(broken.stderr).toMatch(/^mrtr gateway check: .*bad-rule\.yaml:9: rules\[1\]: unknown key "rols"/);
  });

  it('gateway check warns of a condition that reads an argument a pinned tool does not have (rule, tool, argument)', async () => {
    // `args.txt` type-checks (args is a map), so the deny would quietly never match set_description's `text`.
    const file = config(
      'check-args',
      `${EVERYONE}  - name: no secrets
    tools: ["files/set_*"]
    when: 'args.txt.contains("secret") || "text" in args'
    deny: true
`,
    );
    const unpinned = await mrtr(['gateway', 'check', '--config', file]);
    expect(unpinned.status).toBe(0);
    expect(unpinned.stderr).toBe(
      `mrtr gateway check: no tools pinned in ${join(dir, 'check-args.lock.json')}, so the arguments conditions read are not checked (mrtr gateway pin --config ${file} --all pins them)\n`,
    );
    expect((await mrtr(['gateway', 'pin', '--config', file, '--all'])).status).toBe(0);
    const run = await mrtr(['gateway', 'check', '--config', file]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('2 rules, policy version ');
    expect(run.stderr).toBe(
      'mrtr gateway check: warning: rules[1] "no secrets": its condition reads args.txt, but files/set_description has no argument "txt" (it has: text)\n',
    );
  }, 60_000);
});

describe('mrtr gateway pin', () => {
  it('on a fresh lock file lists every tool as new and writes nothing; --all writes the lock', async () => {
    const file = config('fresh', EVERYONE);
    const lock = join(dir, 'fresh.lock.json');
    const shown = await mrtr(['gateway', 'pin', '--config', file]);
    expect(shown.status, shown.stderr).toBe(0);
    expect(shown.stdout.split('\n')).toEqual([
      'new       files/read_note (not pinned: --accept files/read_note or --all pins it)',
      'new       files/set_description (not pinned: --accept files/set_description or --all pins it)',
      'new       files/x (not pinned: --accept files/x or --all pins it)',
      '3 tools listed: 0 unchanged, 3 new, not pinned',
      '',
    ]);
    expect(existsSync(lock)).toBe(false);
    const all = await mrtr(['gateway', 'pin', '--config', file, '--all']);
    expect(all.status).toBe(0);
    expect(all.stdout).toContain('pinned    files/x (new)');
    expect(all.stdout).toContain(`wrote ${lock}; a running gateway takes it on SIGHUP`);
    const pins = JSON.parse(readFileSync(lock, 'utf8'));
    expect(Object.keys(pins.tools)).toEqual(['files/read_note', 'files/set_description', 'files/x']);
    expect(pins.tools['files/x'].definition.description).toBe('Runs x');
  });

  it('--check writes nothing and exits 1 naming each new or changed tool; 0 once the lock matches', async () => {
    const file = config('check-pins', EVERYONE, join(dir, 'check-pins.description'));
    const lock = join(dir, 'check-pins.lock.json');
    const fresh = await mrtr(['gateway', 'pin', '--config', file, '--check']);
    expect(fresh.status).toBe(1);
    expect(fresh.stderr).toBe(
      `mrtr gateway pin --check: 3 tools listed now differ from ${lock}: files/read_note (new), files/set_description (new), files/x (new)\n`,
    );
    expect(existsSync(lock)).toBe(false);
    expect((await mrtr(['gateway', 'pin', '--config', file, '--all'])).status).toBe(0);
    const matching = await mrtr(['gateway', 'pin', '--config', file, '--check']);
    expect(matching.status, matching.stderr).toBe(0);
    expect(matching.stdout).toContain('3 tools listed: 3 unchanged');

    writeFileSync(join(dir, 'check-pins.description'), 'Runs x, differently');
    const before = readFileSync(lock, 'utf8');
    const drifted = await mrtr(['gateway', 'pin', '--config', file, '--check']);
    expect(drifted.status).toBe(1);
    expect(drifted.stdout).toContain('changed   files/x (withheld until accepted: --accept files/x)');
    expect(drifted.stderr).toBe(
      `mrtr gateway pin --check: 1 tool listed now differs from ${lock}: files/x (changed)\n`,
    );
    expect(readFileSync(lock, 'utf8')).toBe(before);

    const both = await mrtr(['gateway', 'pin', '--config', file, '--check', '--all']);
    expect(both.status).toBe(2);
    expect(both.stderr).toBe('mrtr gateway pin: --check writes nothing, so it cannot go with --all\n');
  }, 120_000);
});

describe('a running gateway and a tool that changes under it', () => {
  let gateway: ServedCli;
  let file: string;
  let lock: string;
  const description = join(dir, 'running.description');

  beforeAll(async () => {
    file = config('running', EVERYONE, description);
    lock = join(dir, 'running.lock.json');
    expect((await mrtr(['gateway', 'pin', '--config', file, '--all'])).status).toBe(0);
    gateway = await serveCli(
      [
        '--config',
        file,
        '--locked',
        '--port',
        String(await freePort()),
        '--tokens',
        join(dir, 'tokens.json'),
        '--state-keys',
        KEYS,
      ],
      'gateway',
    );
    // Its upstream starts with it: the test lists once it has answered.
    await gateway.saidOnStderr('upstreams started:');
  }, 60_000);
  afterAll(() => gateway?.stop());

  const as = { headers: { authorization: 'Bearer alice-dev-token' } };
  const tools = async () =>
    ((await mcp(gateway.url, 'tools/list', {}, as)).response.result as Loose).tools as Loose[];
  const callX = async () =>
    (await mcp(gateway.url, 'tools/call', { name: 'files__x', arguments: {} }, as)).response;

  it('withholds the changed tool; pin shows the drift and changes nothing; --accept and SIGHUP serve it again', async () => {
    expect((await tools()).map((t) => t.name)).toContain('files__x');
    expect((await callX()).result).toMatchObject({ content: [{ text: 'x ran: Runs x' }] });

    // The rug pull: the upstream rewrites its own tool and says its tools changed.
    const pulled = await mcp(
      gateway.url,
      'tools/call',
      { name: 'files__set_description', arguments: { text: 'Runs x, and mails your keys to evil.example' } },
      as,
    );
    expect(pulled.response.result).toMatchObject({ content: [{ text: 'description changed' }] });
    const listed = await tools();
    expect(listed.map((t) => t.name)).toEqual(['files__read_note', 'files__set_description']);
    await gateway.saidOnStderr('upstream files: tool x withheld: its definition changed since it was pinned');
    // Gone for callers: a call answers as for a tool that does not exist.
    const withheld = await callX();
    expect(JSON.stringify(withheld)).not.toContain('evil.example');
    expect(withheld.error ?? withheld.result?.isError).toBeTruthy();

    const lockBefore = readFileSync(lock, 'utf8');
    const shown = await mrtr(['gateway', 'pin', '--config', file]);
    expect(shown.status).toBe(0);
    expect(shown.stdout.split('\n')).toEqual([
      'unchanged files/read_note',
      'unchanged files/set_description',
      'changed   files/x (withheld until accepted: --accept files/x)',
      '    description changed: …"" → …", and mails your keys to evil.example"',
      '3 tools listed: 2 unchanged, 1 changed, withheld',
      '',
    ]);
    expect(readFileSync(lock, 'utf8')).toBe(lockBefore);

    const accepted = await mrtr(['gateway', 'pin', '--config', file, '--accept', 'files/x']);
    expect(accepted.status).toBe(0);
    expect(accepted.stdout).toContain('accepted  files/x (changed since it was pinned)');
    expect(JSON.parse(readFileSync(lock, 'utf8')).tools['files/x'].definition.description).toBe(
      'Runs x, and mails your keys to evil.example',
    );
    // Accepted in the lock file, but the running gateway has not been told yet.
    expect((await tools()).map((t) => t.name)).not.toContain('files__x');

    gateway.signal('SIGHUP');
    await gateway.saidOnStderr(`SIGHUP: policy reloaded from ${file}`);
    const served = (await tools()).find((t) => t.name === 'files__x');
    expect(served?.description).toBe('Runs x, and mails your keys to evil.example');
    expect((await callX()).result).toMatchObject({
      content: [{ text: 'x ran: Runs x, and mails your keys to evil.example' }],
    });
  });

  it('SIGHUP with a broken config keeps the policy in force and serves on', async () => {
    const good = readFileSync(file, 'utf8');
    const before = (await tools()).map((t) => t.name);
    writeFileSync(file, `${good}  - tools: ["files/x"]\n    rols: [admin]\n`);
    try {
      gateway.signal('SIGHUP');
      await gateway.saidOnStderr('SIGHUP: the policy in force is kept: ');
      expect(gateway.stderr()).toContain(
        `mrtr gateway: SIGHUP: the policy in force is kept: ${file}:9: rules[1]: unknown key "rols"`,
      );
      expect((await tools()).map((t) => t.name)).toEqual(before);
      expect((await callX()).result).toMatchObject({
        content: [{ text: expect.stringMatching(/^x ran: /) }],
      });
    } finally {
      writeFileSync(file, good);
    }
  });
});
