// Verifying from the console on a live server: the audit panel reads the trail a page at a time (never whole), says
// a run is under way while it lasts, and a second press during a run waits for that run instead of reading the trail
// again. The panel is driven directly with a held reader (explicit signals): the HTTP and CSRF paths are in
// console-access.test.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { type AuditReader, SqliteAuditReader, SqliteAuditSink } from '../../src/audit/index.js';
import { readForm } from '../../src/auth/internal.js';
import { AuditPanel, type PanelContext } from '../../src/console/index.js';
import { AUDIT_KEY, auditedServer, call, env, openTrail, tempDir } from '../audit/fixture.js';
import { deferred } from '../helpers/signals.js';

const tmp = tempDir();
afterAll(() => tmp.remove());

function formPost(): IncomingMessage {
  const req = Readable.from([Buffer.from('csrf=ok')]) as unknown as IncomingMessage;
  Object.assign(req, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  return req;
}

function get(): IncomingMessage {
  return Object.assign(Readable.from([]), { method: 'GET', headers: {} }) as unknown as IncomingMessage;
}

/** What the panel answered one person: the page's markup, or where it sent the browser. */
function contextFor(subject: string, req: IncomingMessage = formPost()) {
  const answered: { page?: string; seeOther?: string } = {};
  const ctx = {
    session: { subject, issuer: 'dev', roles: ['auditor'], via: 'dev', sid: subject },
    roles: new Set(['auditor']),
    csrf: 'ok',
    url: new URL('http://127.0.0.1/mrtr/console/audit'),
    origin: 'http://127.0.0.1',
    checkForm: (form: URLSearchParams) => form.get('csrf') === 'ok',
    // As the console reads a POST (the refusals of a forged one are tested over HTTP in console-access).
    postedForm: async () => {
      const form = await readForm(req);
      return form.get('csrf') === 'ok' ? form : undefined;
    },
    page: (_status: number, _title: string, body: { markup: string }) => {
      answered.page = body.markup;
    },
    seeOther: (path: string) => {
      answered.seeOther = path;
    },
    json: () => {},
  } as unknown as PanelContext;
  return { ctx, answered };
}

describe('verifying from the console', () => {
  it('reads by pages, says a run is under way, and a second press joins the run', async () => {
    const path = join(tmp.dir, 'audit.db');
    const trail = await openTrail(await SqliteAuditSink.open(path), { instance: 'w-1' });
    const core = auditedServer(trail).core;
    for (let i = 0; i < 6; i++)
      await core.handle(call(i, 'delete_file', { arguments: { path: `/${i}` } }), env);
    await trail.close();
    const sqlite = new SqliteAuditReader(path);
    // The reader hands out its first page, then holds the run until the test lets it go on.
    const firstPageRead = deferred();
    const goOn = deferred();
    let runs = 0;
    const requestsLetIn: boolean[] = [];
    const held: AuditReader = {
      description: sqlite.description,
      events: () => Promise.reject(new Error('the console must not read the trail whole')),
      eventPages: async function* (pageSize) {
        runs++;
        expect(pageSize).toBe(1000);
        const events = [];
        for await (const page of sqlite.eventPages(pageSize)) events.push(...page);
        // A request that arrives while the first page is checked: it must be let in before the next page is read.
        let requestServed = false;
        setImmediate(() => {
          requestServed = true;
        });
        yield events.slice(0, 5);
        requestsLetIn.push(requestServed);
        firstPageRead.resolve();
        await goOn.promise;
        yield events.slice(5);
      },
      checkpoints: () => sqlite.checkpoints(),
      publishedKeys: () => sqlite.publishedKeys(),
      close: async () => {},
    };
    const panel = new AuditPanel({ reader: held, verifierKeys: [AUDIT_KEY.verifier.text], now: () => 0 });

    const erinForm = formPost();
    const erin = contextFor('erin', erinForm);
    const erinPress = panel.handle(erinForm, {} as ServerResponse, erin.ctx, '/verify');
    await firstPageRead.promise;
    const look = contextFor('carol');
    await panel.handle(get(), {} as ServerResponse, look.ctx, '');
    expect(look.answered.page).toContain(
      'Verification under way, started by erin at 1970-01-01T00:00:00.000Z.',
    );
    const carolForm = formPost();
    const carol = contextFor('carol', carolForm);
    const carolFormRead = new Promise((resolve) => carolForm.once('end', resolve));
    const carolPress = panel.handle(carolForm, {} as ServerResponse, carol.ctx, '/verify');
    // Her form read, the panel decides at once whether to start a run or join one; erin's run is still held.
    await carolFormRead;
    await new Promise((resolve) => setImmediate(resolve));
    goOn.resolve();
    await Promise.all([erinPress, carolPress]);
    expect(runs).toBe(1);
    expect(erin.answered.seeOther).toBe('/mrtr/console/audit');
    expect(carol.answered.seeOther).toBe('/mrtr/console/audit');

    const after = contextFor('carol');
    await panel.handle(get(), {} as ServerResponse, after.ctx, '');
    expect(after.answered.page).not.toContain('under way');
    expect(after.answered.page).toContain('<strong>Intact</strong>: 12 events in 1 chain(s)');
    expect(after.answered.page).toContain('run by erin');
    // The next press reads the trail again.
    const againForm = formPost();
    const again = contextFor('erin', againForm);
    const pressed = panel.handle(againForm, {} as ServerResponse, again.ctx, '/verify');
    await pressed;
    expect(runs).toBe(2);
    expect(requestsLetIn).toEqual([true, true]);
    await sqlite.close();
  });

  it('a trail that cannot be read as one is shown NOT VERIFIED, with why, and the next press tries again', async () => {
    let presses = 0;
    const broken: AuditReader = {
      description: 'sqlite:broken.db',
      events: () => Promise.reject(new Error('read whole')),
      eventPages: async function* () {
        presses++;
        yield* [];
        throw new Error('sqlite:broken.db: mrtr_audit_events is a view, not a table: the file was edited');
      },
      checkpoints: async () => [],
      publishedKeys: async () => [],
      close: async () => {},
    };
    const panel = new AuditPanel({ reader: broken, verifierKeys: [AUDIT_KEY.verifier.text], now: () => 0 });
    const erin = contextFor('erin');
    await panel.handle(formPost(), {} as ServerResponse, erin.ctx, '/verify');
    expect(erin.answered.seeOther).toBe('/mrtr/console/audit');
    const look = contextFor('erin');
    await panel.handle(get(), {} as ServerResponse, look.ctx, '');
    expect(look.answered.page).toContain(
      '<strong>NOT VERIFIED</strong>: the trail could not be read as one: sqlite:broken.db: mrtr_audit_events is a view, not a table: the file was edited (run by erin',
    );
    expect(look.answered.page).not.toContain('under way');
    expect((await panel.summary()) as { markup: string }).toMatchObject({
      markup: expect.stringContaining('<strong>NOT intact</strong>'),
    });
    await panel.handle(formPost(), {} as ServerResponse, contextFor('erin').ctx, '/verify');
    expect(presses).toBe(2);
  });
});
