// `mrtr audit bundle` and `--bundle FILE`: the whole trail in one file, checked offline exactly as the sink is — an
// intact bundle verifies, every kind of edit is named, keys inside a bundle count only when nobody holds better, and
// every mistake with the file gets a message naming it.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealCheckpoint } from '../../src/audit/checkpoint.js';
import {
  type AuditBundle,
  AuditSigner,
  BUNDLE_FORMAT,
  BundleReader,
  SqliteAuditSink,
} from '../../src/audit/index.js';
import {
  AUDIT_KEY,
  accept,
  auditedServer,
  call,
  env,
  openTrail,
  stateOf,
  tempDir,
} from '../audit/fixture.js';
import { runCommand } from '../helpers/run-cli.js';

const tmp = tempDir();
const db = join(tmp.dir, 'audit.db');
const bundleFile = join(tmp.dir, 'trail.json');
const VKEY = AUDIT_KEY.verifier.text;
let flowId = '';

async function audit(args: string[]) {
  const out = await runCommand(process.execPath, ['dist/cli/main.js', 'audit', ...args], {
    encoding: 'utf8',
    timeout: 20_000,
    env: { ...process.env, MRTR_AUDIT_VKEY: undefined },
  });
  return { status: out.status, stdout: out.stdout, stderr: out.stderr };
}

beforeAll(async () => {
  const trail = await openTrail(await SqliteAuditSink.open(db), { checkpointEvery: 2 });
  const core = auditedServer(trail).core;
  const ada = { ...env, principal: { subject: 'ada', issuer: 'https://id.test' } };
  const first = await core.handle(call(1, 'delete_file', { arguments: { path: '/srv/report.pdf' } }), ada);
  await core.handle(
    call(2, 'delete_file', {
      arguments: { path: '/srv/report.pdf' },
      requestState: stateOf(first),
      inputResponses: { consent: accept({ confirm: true }) },
    }),
    ada,
  );
  await trail.close();
  const made = await audit(['bundle', '--audit', `sqlite:${db}`, '--out', bundleFile]);
  expect(made.status).toBe(0);
  expect(made.stderr).toMatch(/^mrtr audit bundle: \d+ event\(s\) and \d+ checkpoint\(s\) written to /);
});
afterAll(() => tmp.remove());

const original = (): AuditBundle => JSON.parse(readFileSync(bundleFile, 'utf8')) as AuditBundle;
function variant(name: string, change: (b: AuditBundle) => void): string {
  const b = original();
  change(b);
  const file = join(tmp.dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(b));
  return file;
}

describe('a bundle', () => {
  it('holds every event, the checkpoints and the published key, and verifies offline with --vkey', async () => {
    const b = original();
    expect(b.format).toBe(BUNDLE_FORMAT);
    expect(b.source).toBe(`sqlite:${db}`);
    expect(b.events.length).toBeGreaterThan(2);
    expect(b.checkpoints.length).toBeGreaterThan(0);
    expect(b.verifierKeys).toEqual([VKEY]);
    const verified = await audit(['verify', '--bundle', bundleFile, '--vkey', VKEY]);
    expect(verified.stderr).toBe('');
    expect(verified.stdout).toMatch(/^intact: \d+ events in 1 chain\(s\), \d+ checkpoint\(s\) verified/);
    expect(verified.status).toBe(0);
  });

  it('flows and show read it like a sink', async () => {
    const flows = await audit(['flows', '--bundle', bundleFile, '--json']);
    expect(flows.status).toBe(0);
    const list = JSON.parse(flows.stdout) as Array<{ flowId: string; principal: string; outcome: string }>;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ principal: 'ada', outcome: 'complete' });
    flowId = list[0]!.flowId;
    const show = await audit(['show', flowId, '--bundle', bundleFile]);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain('delete_file');
  });

  it('without --vkey it checks against the keys inside, and says they are only as good as the file', async () => {
    const verified = await audit(['verify', '--bundle', bundleFile]);
    expect(verified.status).toBe(0);
    expect(verified.stderr).toContain('no --vkey: checking checkpoints against the keys inside the bundle');
  });

  it('every edit is named: an event’s text, a query column, a deleted event, a dropped or altered checkpoint', async () => {
    const cases: Array<[string, (b: AuditBundle) => void, RegExp]> = [
      [
        'text',
        (b) => {
          b.events[1]!.text = b.events[1]!.text.replace('report', 'rep0rt');
        },
        /TAMPERED: first bad event test-1 #2/,
      ],
      [
        'column',
        (b) => {
          b.events[1]!.columns = { ...b.events[1]!.columns, principal: 'mallory' };
        },
        /query column principal differs/,
      ],
      ['deleted', (b) => void b.events.splice(1, 1), /event 2 is missing \(deleted\)/],
      ['tail', (b) => void b.events.pop(), /TAMPERED/],
      [
        'checkpoint',
        (b) => {
          b.checkpoints[0]!.note = b.checkpoints[0]!.note.replace(/\n\d+\n/, '\n1\n');
        },
        /TAMPERED/,
      ],
    ];
    for (const [name, change, problem] of cases) {
      const out = await audit(['verify', '--bundle', variant(name, change), '--vkey', VKEY]);
      expect({ name, status: out.status }).toEqual({ name, status: 1 });
      expect(out.stdout, name).toMatch(problem);
    }
  });

  it('an attacker who rewrites the trail and re-signs it with a key of their own is caught by the key you hold', async () => {
    const mallory = AuditSigner.generate('mrtr-audit');
    const file = variant('resigned', (b) => {
      b.verifierKeys = [mallory.verifier.text];
      b.checkpoints = b.checkpoints.map((c) =>
        sealCheckpoint(c.instance, { seq: c.seq, hash: c.hash }, mallory, new Date()),
      );
    });
    const withKey = await audit(['verify', '--bundle', file, '--vkey', VKEY]);
    expect(withKey.status).toBe(1);
    expect(withKey.stdout).toMatch(/^UNVERIFIED/);
    // Without the key you hold, the forged keys inside are all there is: the warning is the whole defence.
    const trusting = await audit(['verify', '--bundle', file]);
    expect(trusting.stderr).toContain(
      'keys inside the bundle, which whoever made or changed the file could replace',
    );
  });

  it('each mistake with the file is named: missing, a folder, not JSON, not a bundle, wrong fields, with --audit', async () => {
    const cases: Array<[string[], number, string]> = [
      [
        ['verify', '--bundle', join(tmp.dir, 'nope.json')],
        2,
        `cannot read --bundle ${join(tmp.dir, 'nope.json')}`,
      ],
      [['verify', '--bundle', tmp.dir], 2, `--bundle ${tmp.dir} is not a file`],
      [
        [
          'verify',
          '--bundle',
          variant('fmt', (b) => {
            (b as { format: string }).format = 'other/1';
          }),
        ],
        1,
        'format must be "mrtr-audit-bundle/1", got "other/1"',
      ],
      [
        [
          'verify',
          '--bundle',
          variant('seq', (b) => {
            (b.events[0] as { seq: unknown }).seq = 'one';
          }),
        ],
        1,
        'events[0] needs instance (string), seq (a whole number from 1)',
      ],
      [
        [
          'verify',
          '--bundle',
          variant('keys', (b) => {
            (b as { verifierKeys: unknown }).verifierKeys = 'k';
          }),
        ],
        1,
        'verifierKeys must be an array of strings',
      ],
      [
        ['verify', '--bundle', bundleFile, '--audit', `sqlite:${db}`],
        2,
        'give --audit URL or --bundle FILE, not both',
      ],
      [['bundle', '--bundle', bundleFile], 2, 'bundle reads a sink (--audit URL)'],
    ];
    writeFileSync(join(tmp.dir, 'garbage.json'), '{"format": ');
    cases.push([
      ['verify', '--bundle', join(tmp.dir, 'garbage.json')],
      1,
      'is not an mrtr audit bundle: not JSON',
    ]);
    for (const [args, status, message] of cases) {
      const out = await audit([...args, '--vkey', VKEY]);
      expect({ args, status: out.status }).toEqual({ args, status });
      if (message) expect(out.stderr).toContain(message);
    }
  });

  it('a reader of a bundle filters by flow and time as a sink does', async () => {
    const reader = BundleReader.parse(readFileSync(bundleFile, 'utf8'), 'trail.json');
    const all = await reader.events();
    expect((await reader.events({ flowId })).length).toBe(all.filter((e) => e.text.includes(flowId)).length);
    expect(await reader.events({ since: '2999-01-01T00:00:00.000Z' })).toEqual([]);
    expect((await reader.events({ since: '2000-01-01T00:00:00.000Z' })).length).toBe(all.length);
    expect(reader.description).toMatch(/^bundle:trail\.json \(exported \d{4}-.+ from sqlite:/);
  });
});
