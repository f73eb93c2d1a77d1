// The console's rules, sent as attacks from Node with real sessions against `mrtr serve`: who sees which panel, CSRF
// on every form, another person's deep link, self-approval, a vote for a page that changed, bad filters, and the
// decision path end to end (bob approves in the console, alice's retry completes). Once against `mrtr serve`, once
// against the same parts in this process, where mutation testing reaches the console's code.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPage, hiddenFields, postForm } from '../helpers/page-sessions.js';
import { runCommand } from '../helpers/run-cli.js';
import { approvalIdOf, type ConsoleFixture, startConsole, startConsoleInProcess } from './fixture.js';

describe.each([
  ['mrtr serve', startConsole],
  ['in process', startConsoleInProcess],
] as const)('the console (%s)', (_how, start) => {
  let f: ConsoleFixture;
  beforeAll(async () => {
    f = await start();
  });
  afterAll(async () => {
    await f?.stop();
  });

  const ASK = { resource: 'prod-db', reason: 'Incident 4711: read the slow-query log' };
  const PANELS = ['approvals', 'flows', 'audit'] as const;

  async function status(subject: string, path: string): Promise<number> {
    return (await getPage(`${f.origin}${path}`, await f.cookie(subject))).status;
  }

  describe('who sees what', () => {
    it('without a session every console page sends the browser to sign in, and back', async () => {
      for (const path of [
        '/mrtr/console',
        '/mrtr/console/approvals',
        '/mrtr/console/flows',
        '/mrtr/console/audit',
      ]) {
        const r = await fetch(`${f.origin}${path}`, { redirect: 'manual' });
        expect(r.status).toBe(303);
        expect(r.headers.get('location')).toBe(`${f.origin}/mrtr/signin?return=${encodeURIComponent(path)}`);
      }
    });

    it('each panel opens only for its roles; the navigation shows only those', async () => {
      const expected: Record<string, Record<(typeof PANELS)[number], number>> = {
        bob: { approvals: 200, flows: 403, audit: 403 },
        erin: { approvals: 403, flows: 200, audit: 200 },
        carol: { approvals: 200, flows: 200, audit: 200 },
        dave: { approvals: 403, flows: 403, audit: 403 },
        // ops is mapped to approver by --console-role approver=approver,ops
        frank: { approvals: 200, flows: 403, audit: 403 },
      };
      for (const [who, panels] of Object.entries(expected)) {
        const home = await getPage(`${f.origin}/mrtr/console`, await f.cookie(who));
        expect(home.status).toBe(200);
        for (const panel of PANELS) {
          expect({ who, panel, status: await status(who, `/mrtr/console/${panel}`) }).toEqual({
            who,
            panel,
            status: panels[panel],
          });
          expect(home.html.includes(`href="/mrtr/console/${panel}"`)).toBe(panels[panel] === 200);
        }
      }
      expect((await getPage(`${f.origin}/mrtr/console`, await f.cookie('dave'))).html).toContain(
        'hold no console role',
      );
    });

    it('a refused panel says which role it needs and shows none of its data', async () => {
      const page = await getPage(`${f.origin}/mrtr/console/flows`, await f.cookie('bob'));
      expect(page.status).toBe(403);
      expect(page.html).toContain('Flows is for people with the console role auditor or admin');
      expect(page.html).not.toContain('flows-list');
    });

    it('the live stream is refused to a person with no console role', async () => {
      const r = await fetch(`${f.origin}/mrtr/console/live`, { headers: { cookie: await f.cookie('dave') } });
      expect(r.status).toBe(403);
    });

    it('an unknown panel is 404, a wrong method 405', async () => {
      expect(await status('carol', '/mrtr/console/nothing')).toBe(404);
      for (const path of ['/mrtr/console', '/mrtr/console/live']) {
        const post = await fetch(`${f.origin}${path}`, {
          method: 'POST',
          headers: { cookie: await f.cookie('carol'), origin: f.origin },
        });
        expect({ path, status: post.status, allow: post.headers.get('allow') }).toEqual({
          path,
          status: 405,
          allow: 'GET',
        });
      }
      // A panel's own 405 says which methods work, as the console's does.
      const r = await fetch(`${f.origin}/mrtr/console/flows`, {
        method: 'DELETE',
        headers: { cookie: await f.cookie('carol') },
      });
      expect({ status: r.status, allow: r.headers.get('allow') }).toEqual({ status: 405, allow: 'GET' });
    });

    it('pages carry the security headers and allow only our own script', async () => {
      const r = await fetch(`${f.origin}/mrtr/console/approvals`, {
        headers: { cookie: await f.cookie('bob') },
      });
      const csp = r.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(r.headers.get('x-frame-options')).toBe('DENY');
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(await r.text()).toContain('<script src="/mrtr/assets/console.js" defer></script>');
      const script = await fetch(`${f.origin}/mrtr/assets/console.js`);
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(await script.text()).toContain("new EventSource('/mrtr/console/live')");
    });
  });

  describe('approvals in the console', () => {
    it('bob approves alice’s request with a reason; the history shows it; alice’s retry completes', async () => {
      const first = await f.call('alice-token', 'request_access', ASK);
      const id = approvalIdOf(first);
      const bob = await f.cookie('bob');
      const queue = await getPage(`${f.origin}/mrtr/console/approvals`, bob);
      expect(queue.html).toContain(`href="/mrtr/console/approvals/${id}"`);
      expect(queue.html).toContain('Incident 4711: read the slow-query log');
      expect(queue.html).toMatch(/risk <strong class="risk-medium">medium<\/strong>/);
      const home = await getPage(`${f.origin}/mrtr/console`, bob);
      expect(home.html).toMatch(/<span class="badge" id="approvals-count">\d+<\/span>/);

      const page = await getPage(`${f.origin}/mrtr/console/approvals/${id}`, bob);
      expect(page.status).toBe(200);
      expect(page.html).toContain('prod-db');
      const fields = hiddenFields(page.html);
      const vote = await postForm(
        `${f.origin}/mrtr/console/approvals/${id}`,
        bob,
        { ...fields, decision: 'approve', reason: 'ok for incident 4711' },
        f.origin,
      );
      expect(vote.status).toBe(303);
      expect(vote.location).toBe(`/mrtr/console/approvals/${id}`);
      const after = await getPage(`${f.origin}/mrtr/console/approvals/${id}`, bob);
      expect(after.html).toContain('Approved by 1 of 1');
      expect(after.html).toContain('ok for incident 4711');
      const history = await getPage(`${f.origin}/mrtr/console/approvals`, bob);
      expect(history.html).toMatch(
        new RegExp(`href="/mrtr/console/approvals/${id}">[^<]*</a></td><td>Alice</td><td>approved`),
      );

      const done = await f.call('alice-token', 'request_access', ASK, {
        requestState: first.result.requestState,
        inputResponses: { approval: { action: 'accept' } },
      });
      expect(done.result.content[0].text).toContain('granted');
      expect(done.result.content[0].text).toContain('bob');
      // The decision is told as every surface tells it (the audit trail's notes and the log get it), marked console.
      if (f.events)
        expect(f.events.find((e) => e.id === id && e.action === 'approve')).toEqual({
          control: 'approval',
          action: 'approve',
          id,
          by: 'bob',
          at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          detail: {
            comment: 'ok for incident 4711',
            via: 'console',
            state: 'approved',
            effectDigest: expect.stringMatching(/^[\w-]{20,}/),
            requester: 'alice',
          },
        });
    });

    it('a decision needs a reason, and approve or deny: nothing is recorded otherwise', async () => {
      const id = approvalIdOf(await f.call('alice-token', 'request_access', ASK));
      const bob = await f.cookie('bob');
      const fields = hiddenFields((await getPage(`${f.origin}/mrtr/console/approvals/${id}`, bob)).html);
      const url = `${f.origin}/mrtr/console/approvals/${id}`;
      const blank = await postForm(url, bob, { ...fields, decision: 'approve', reason: '  ' }, f.origin);
      expect(blank.status).toBe(400);
      expect(blank.html).toContain('Give a reason');
      const odd = await postForm(url, bob, { ...fields, decision: 'maybe', reason: 'x' }, f.origin);
      expect(odd.status).toBe(400);
      expect(odd.html).toContain('Choose approve or deny');
      expect((await getPage(url, bob)).html).toContain('Approved by 0 of 1');
    });

    it('CSRF: no token, another session’s token, or another origin is refused and records nothing', async () => {
      const id = approvalIdOf(await f.call('alice-token', 'request_access', ASK));
      const bob = await f.cookie('bob');
      const url = `${f.origin}/mrtr/console/approvals/${id}`;
      const fields = hiddenFields((await getPage(url, bob)).html);
      const carolFields = hiddenFields((await getPage(url, await f.cookie('carol'))).html);
      const tries = [
        { cookie: bob, fields: { ...fields, csrf: '' }, origin: f.origin },
        { cookie: bob, fields: { ...fields, csrf: carolFields.csrf ?? 'x' }, origin: f.origin },
        { cookie: bob, fields, origin: 'http://evil.example' },
        { cookie: bob, fields, origin: undefined },
      ];
      for (const t of tries) {
        const r = await postForm(
          url,
          t.cookie,
          { ...t.fields, decision: 'approve', reason: 'forged' },
          t.origin,
        );
        expect(r.status).toBe(403);
        // Another origin is refused at the listener's front door already; the others by the console's CSRF check.
        expect(r.html).toMatch(
          t.origin === 'http://evil.example'
            ? /Origin http:\/\/evil.example is not allowed/
            : /Nothing was recorded/,
        );
      }
      expect((await getPage(url, bob)).html).toContain('Approved by 0 of 1');
    });

    it('bob cannot decide his own request; frank (ops) reads it but may not decide a request for approver', async () => {
      const own = approvalIdOf(await f.call('bob-token', 'request_access', ASK));
      const bob = await f.cookie('bob');
      const ownPage = await getPage(`${f.origin}/mrtr/console/approvals/${own}`, bob);
      expect(ownPage.html).not.toContain('name="decision"');
      const fields = hiddenFields(ownPage.html);
      const self = await postForm(
        `${f.origin}/mrtr/console/approvals/${own}`,
        bob,
        { ...fields, decision: 'approve', reason: 'me' },
        f.origin,
      );
      expect(self.status).toBe(403);
      expect(self.html).toContain('someone else must review it');
      if (f.events)
        expect(f.events.find((e) => e.id === own && e.action === 'vote_refused')).toEqual({
          control: 'approval',
          action: 'vote_refused',
          id: own,
          by: 'bob',
          at: expect.stringMatching(/^\d{4}-/),
          detail: { reason: 'self_approval', via: 'console' },
        });

      const id = approvalIdOf(await f.call('alice-token', 'request_access', ASK));
      const frank = await f.cookie('frank');
      const frankPage = await getPage(`${f.origin}/mrtr/console/approvals/${id}`, frank);
      expect(frankPage.status).toBe(200);
      expect(frankPage.html).toContain('reviewing this needs the role approver');
      // He is not shown the queue card either: the queue lists what a person may decide.
      expect((await getPage(`${f.origin}/mrtr/console/approvals`, frank)).html).not.toContain(id);
      const forged = await postForm(
        `${f.origin}/mrtr/console/approvals/${id}`,
        frank,
        { ...hiddenFields(frankPage.html), decision: 'approve', reason: 'not mine' },
        f.origin,
      );
      expect(forged.status).toBe(403);
      expect(
        (await getPage(`${f.origin}/mrtr/console/approvals/${id}`, await f.cookie('bob'))).html,
      ).toContain('Approved by 0 of 1');
    });

    it('another person’s deep link shows nothing to someone without the role', async () => {
      const id = approvalIdOf(await f.call('alice-token', 'request_access', ASK));
      for (const who of ['alice', 'erin', 'dave']) {
        const page = await getPage(`${f.origin}/mrtr/console/approvals/${id}`, await f.cookie(who));
        expect(page.status).toBe(403);
        expect(page.html).not.toContain('prod-db');
      }
      expect(await status('bob', '/mrtr/console/approvals/AAAAAAAAAAAAAAAA')).toBe(404);
      expect(await status('bob', '/mrtr/console/approvals/not-an-id')).toBe(404);
    });

    it('a vote for a page that changed since it was opened is refused', async () => {
      const id = approvalIdOf(await f.call('alice-token', 'request_access', ASK));
      const bob = await f.cookie('bob');
      const fields = hiddenFields((await getPage(`${f.origin}/mrtr/console/approvals/${id}`, bob)).html);
      const r = await postForm(
        `${f.origin}/mrtr/console/approvals/${id}`,
        bob,
        { ...fields, seen: 'another-page', decision: 'approve', reason: 'ok' },
        f.origin,
      );
      expect(r.status).toBe(409);
      expect(r.html).toContain('the request changed since you opened it');
    });

    it('what a requester wrote is shown as text, never as markup', async () => {
      await f.call('alice-token', 'request_access', {
        resource: '<img src=x onerror=alert(1)>',
        reason: '<script>alert(1)</script>',
      });
      const queue = await getPage(`${f.origin}/mrtr/console/approvals`, await f.cookie('bob'));
      expect(queue.html).not.toContain('<script>alert(1)</script>');
      expect(queue.html).not.toContain('<img src=x');
      expect(queue.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    });
  });

  describe('flows and audit integrity', () => {
    it('the flows list filters by principal, tool and outcome; a flow’s timeline and export show its rounds', async () => {
      await f.call('dave-token', 'create_ticket', { title: 'Printer on fire' });
      const erin = await f.cookie('erin');
      const all = await getPage(`${f.origin}/mrtr/console/flows?principal=alice&tool=request_access`, erin);
      expect(all.status).toBe(200);
      const links = [...all.html.matchAll(/href="\/mrtr\/console\/flows\/([\w-]+)"/g)].map((m) => m[1]!);
      expect(links.length).toBeGreaterThan(0);
      expect(all.html).not.toContain('create_ticket');
      const timeline = await getPage(`${f.origin}/mrtr/console/flows/${links[0]}`, erin);
      expect(timeline.status).toBe(200);
      expect(timeline.html).toContain('alice (urn:mrtr:dev-tokens)');
      expect(timeline.html).toContain('Asked approval');
      const exported = await fetch(`${f.origin}/mrtr/console/flows/${links[0]}/export`, {
        headers: { cookie: erin },
      });
      expect(exported.headers.get('content-disposition')).toBe(
        `attachment; filename="flow-${links[0]}.json"`,
      );
      const body = (await exported.json()) as { records: Array<{ flowId: string; target: string }> };
      expect(body.records.length).toBeGreaterThan(1);
      expect(new Set(body.records.map((r) => r.flowId))).toEqual(new Set([links[0]]));
      // Behind no gateway, no flow has an upstream.
      const upstream = await getPage(`${f.origin}/mrtr/console/flows?upstream=files&principal=alice`, erin);
      expect(upstream.html).toContain('<p>0 flows.</p>');
      const home = await getPage(`${f.origin}/mrtr/console`, erin);
      expect(home.html).toMatch(/\d+ flows? in the last hour, \d+ refused or failed\./);
      const byDave = await getPage(`${f.origin}/mrtr/console/flows?principal=dave`, erin);
      expect(byDave.html).toContain('create_ticket');
      expect(byDave.html).not.toContain('request_access');
    });

    it('bad filters are named, not ignored; an unknown flow is 404', async () => {
      const erin = await f.cookie('erin');
      const since = await getPage(`${f.origin}/mrtr/console/flows?since=yesterday-ish`, erin);
      expect(since.status).toBe(400);
      expect(since.html).toContain('is not a time');
      const outcome = await getPage(`${f.origin}/mrtr/console/flows?outcome=won`, erin);
      expect(outcome.status).toBe(400);
      expect(outcome.html).toContain('&quot;won&quot; is not an outcome');
      expect(await status('erin', '/mrtr/console/flows/AAAAAAAAAAAAAAAAAAAAAA')).toBe(404);
      expect(await status('erin', '/mrtr/console/flows/..%2F..%2Fetc')).toBe(404);
      expect(await status('erin', '/mrtr/console/flows/%E0%A4%A')).toBe(404);
    });

    it('the bundle an auditor downloads verifies offline with mrtr audit verify --bundle; an approver gets none', async () => {
      expect(f.verifierKey).toMatch(/^mrtr-audit\+/);
      const refused = await fetch(`${f.origin}/mrtr/console/audit/bundle`, {
        headers: { cookie: await f.cookie('bob') },
      });
      expect(refused.status).toBe(403);
      const r = await fetch(`${f.origin}/mrtr/console/audit/bundle`, {
        headers: { cookie: await f.cookie('erin') },
      });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-disposition')).toMatch(
        /^attachment; filename="mrtr-audit-[\dT-]+Z\.json"$/,
      );
      const file = join(f.dir, 'downloaded.json');
      writeFileSync(file, await r.text());
      const verify = await runCommand(
        process.execPath,
        ['dist/cli/main.js', 'audit', 'verify', '--bundle', file, '--vkey', f.verifierKey],
        { encoding: 'utf8', env: { ...process.env, MRTR_AUDIT_VKEY: undefined } },
      );
      expect(verify.stderr).toBe('');
      expect(verify.stdout).toMatch(/^intact: \d+ events in 1 chain\(s\)/);
      expect(verify.status).toBe(0);
    });

    it('verify runs from the page (CSRF-checked) and names a tampered event', async () => {
      const erin = await f.cookie('erin');
      const page = await getPage(`${f.origin}/mrtr/console/audit`, erin);
      expect(page.html).toContain('Not verified from the console yet');
      const fields = hiddenFields(page.html);
      const forged = await postForm(`${f.origin}/mrtr/console/audit/verify`, erin, { csrf: 'x' }, f.origin);
      expect(forged.status).toBe(403);
      const run = await postForm(`${f.origin}/mrtr/console/audit/verify`, erin, fields, f.origin);
      expect(run.status).toBe(303);
      const intact = await getPage(`${f.origin}/mrtr/console/audit`, erin);
      expect(intact.html).toMatch(/<strong>Intact<\/strong>: \d+ events in 1 chain\(s\)/);
      expect(intact.html).toContain('run by erin');
      expect((await getPage(`${f.origin}/mrtr/console`, erin)).html).toMatch(
        /Last verified \d{4}-[\d-]+T[\d:.]+Z: <strong>intact<\/strong>\./,
      );

      const db = new Database(f.auditDb);
      db.prepare(
        "UPDATE mrtr_audit_events SET record = replace(record, 'prod-db', 'prod-dc') WHERE seq = 1",
      ).run();
      db.close();
      await postForm(`${f.origin}/mrtr/console/audit/verify`, erin, fields, f.origin);
      const tampered = await getPage(`${f.origin}/mrtr/console/audit`, erin);
      expect(tampered.html).toContain('<strong>TAMPERED</strong>');
      expect(tampered.html).toMatch(/first bad event [\w-]+ #1/);
    });
  });
});

describe('a server without browser sign-in', () => {
  it('answers the console with a page that says how to turn sign-in on', async () => {
    const g = await startConsoleInProcess({ signIn: false });
    try {
      const r = await fetch(`${g.origin}/mrtr/console`);
      expect(r.status).toBe(404);
      expect(await r.text()).toContain(
        'The console needs browser sign-in: serve with <code>--tokens FILE</code>',
      );
    } finally {
      await g.stop();
    }
  });
});
