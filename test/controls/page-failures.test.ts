// A page that fails for a reason of the server's own (a store down, a bug) answers 500 saying nothing was recorded,
// and tells the operator: a `page_failed` control event (mrtr serve writes these to stderr) naming the page, the
// method and the error. Before, the 500 left no trace anywhere.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { BrowserSignIn } from '../../src/auth/index.js';
import type { ApprovalBook } from '../../src/controls/approval-book.js';
import type { ApprovalDecisions } from '../../src/controls/approval-decisions.js';
import { ApprovalPages } from '../../src/controls/approval-pages.js';
import type { ControlEvent } from '../../src/controls/context.js';
import { StepUpPage } from '../../src/controls/step-up-page.js';
import type { SharedStore } from '../../src/stores/index.js';

const NOW = Date.UTC(2026, 11, 2, 3, 0, 0);
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((done) => s.close(done));
});

async function serve(page: { handle: ApprovalPages['handle'] }): Promise<string> {
  const server = createServer((req, res) => page.handle(req, res));
  servers.push(server);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const failingSignIn = (): BrowserSignIn => {
  throw new Error('session store unavailable');
};

describe('a page failing for the server’s own reasons', () => {
  it('the approval pages answer 500 and report page_failed with the id, method and error', async () => {
    const events: ControlEvent[] = [];
    const pages = new ApprovalPages({
      book: {} as ApprovalBook,
      decisions: {} as ApprovalDecisions,
      signIn: failingSignIn,
      bearerAuth: () => undefined,
      onEvent: (e) => events.push(e),
      now: () => NOW,
    });
    const origin = await serve(pages);
    const page = await fetch(`${origin}/mrtr/approvals/abc123`);
    expect(page.status).toBe(500);
    expect(await page.text()).toContain('Nothing was recorded');
    expect(events).toEqual([
      {
        control: 'approval',
        action: 'page_failed',
        id: 'abc123',
        at: new Date(NOW).toISOString(),
        detail: { method: 'GET', error: 'Error: session store unavailable' },
      },
    ]);
    const inbox = await fetch(`${origin}/mrtr/approvals`);
    expect(inbox.status).toBe(500);
    expect(events[1]).toMatchObject({ action: 'page_failed', id: '-' });
  });

  it('the step-up page answers 500 and reports page_failed', async () => {
    const events: ControlEvent[] = [];
    const store = {
      get: async () => {
        throw new Error('redis: connection lost');
      },
    } as unknown as SharedStore;
    const page = new StepUpPage({
      store,
      totp: () => undefined,
      signIn: () => ({}) as BrowserSignIn,
      onEvent: (e) => events.push(e),
      now: () => NOW,
      ttlMs: 60_000,
    });
    const origin = await serve(page);
    const res = await fetch(`${origin}/mrtr/step-up/stepUpStepUpStepUpStep`, { method: 'POST' });
    expect(res.status).toBe(500);
    expect(events).toEqual([
      {
        control: 'step_up',
        action: 'page_failed',
        id: 'stepUpStepUpStepUpStep',
        at: new Date(NOW).toISOString(),
        detail: { method: 'POST', error: 'Error: redis: connection lost' },
      },
    ]);
  });
});
