// The whole journey in headless Chromium: alice's client comes back to check and is held; she opens the question's
// link signed in, the server sends her browser to the third party, which sends it back to the callback; the held
// retry wakes with her token. Then her connections page lists it and its button disconnects it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { signedInBrowser } from '../helpers/page-sessions.js';
import { connectServer } from './connect-fixture.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function noSeriousProblems(page: Page): Promise<void> {
  await page.evaluate(AXE);
  const r = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as {
    violations: Array<{ id: string; impact: string }>;
  };
  expect(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
}

describe('connect in a browser', () => {
  it('the held retry wakes once alice has connected in Chromium; her page disconnects it', async () => {
    const f = await connectServer({ pendingWaitMs: 60_000 });
    const first = await f.call('alice-token');
    const link = first.inputRequests.connect_tracker.params.url as string;
    const holding = f.next((e) => e.action === 'waiting');
    const retry = f.call('alice-token', {
      requestState: first.requestState,
      inputResponses: { connect_tracker: { action: 'accept' } },
    });
    expect(await holding).toMatchObject({ connection: 'tracker', detail: { waitMs: 60_000 } });

    const { context, page } = await signedInBrowser(browser, f.origin, 'alice-token');
    await page.goto(link);
    await page.waitForURL(/\/mrtr\/connect\/callback\/tracker\?/);
    await expect(page.getByRole('heading', { name: 'Connected' }).isVisible()).resolves.toBe(true);
    expect(await page.content()).not.toContain('tracker-at-');
    await noSeriousProblems(page);
    expect((await retry).content[0].text).toBe('issues read with tracker-at-1');
    expect(f.rounds.map((r) => [r.round, r.outcome])).toEqual([
      [0, 'input_required'],
      [1, 'complete'],
    ]);

    await page.goto(`${f.origin}/mrtr/connections`);
    await noSeriousProblems(page);
    await page.getByRole('button', { name: 'Disconnect Tracker' }).click();
    await page.waitForURL(`${f.origin}/mrtr/connections`);
    await expect(page.getByText('not connected').isVisible()).resolves.toBe(true);
    expect(f.vault.grants.size).toBe(0);
    await context.close();
  });
});
