// The console in headless Chromium, phone-sized: bob's queue updates live when alice asks, he decides with a reason;
// carol reads the flow's timeline and verifies the trail. Every page is checked with axe-core (no serious or
// critical violation) and kept as a screenshot in test-artifacts/ (docs/console.md shows them).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTEFACTS, launchChromium } from '../helpers/chromium.js';
import { typeDevToken } from '../helpers/page-sessions.js';
import { approvalIdOf, type ConsoleFixture, startConsole } from './fixture.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let browser: Browser;
let f: ConsoleFixture;
beforeAll(async () => {
  [browser, f] = await Promise.all([launchChromium(), startConsole()]);
});
afterAll(async () => {
  await browser?.close();
  await f?.stop();
});

async function signedIn(token: string, viewport = { width: 390, height: 844 }) {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(`${f.origin}/mrtr/signin?return=/mrtr/console`);
  await typeDevToken(page, token);
  await page.waitForURL(`${f.origin}/mrtr/console`);
  return { context, page };
}

/** axe-core's serious and critical violations on the page as it is (the page's CSP forbids our inline script, so
 * axe runs through the DevTools protocol, which the CSP does not govern). */
async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as {
    violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>;
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function shot(page: Page, name: string): Promise<void> {
  expect(await accessibilityProblems(page)).toEqual([]);
  await page.screenshot({ path: join(ARTEFACTS, name), fullPage: true });
}

describe('the console in a browser', () => {
  it('bob’s queue shows alice’s new request without a reload; he approves it with a reason', async () => {
    const bob = await signedIn('bob-token');
    await shot(bob.page, 'console-home.png');
    await bob.page.getByRole('link', { name: 'Approvals' }).first().click();
    await bob.page.waitForFunction(() => document.documentElement.dataset.liveOpen === 'true');
    const first = await f.call('alice-token', 'request_access', {
      resource: 'prod-db',
      reason: 'Incident 4711: read the slow-query log',
    });
    const id = approvalIdOf(first);
    // The explicit signal: the card arrives through the live stream, with no reload.
    await bob.page.locator(`#approval-${id}`).waitFor();
    expect(await bob.page.locator('#queue-h .badge').textContent()).toBe('1');
    await shot(bob.page, 'console-approvals.png');
    await bob.page.getByRole('link', { name: /Alice: Incident 4711/ }).click();
    expect(await bob.page.locator('h1').textContent()).toBe('Review a request');
    await bob.page.getByLabel(/Reason/).fill('ok for incident 4711');
    await shot(bob.page, 'console-approval-review.png');
    await bob.page.getByRole('button', { name: 'Approve' }).click();
    await bob.page.waitForURL(`${f.origin}/mrtr/console/approvals/${id}`);
    expect(await bob.page.locator('h1').textContent()).toContain('Approved');
    expect(await bob.page.getByRole('status').first().textContent()).toContain('Approved by 1 of 1');
    await shot(bob.page, 'console-approval-decided.png');
    await bob.context.close();

    const done = await f.call(
      'alice-token',
      'request_access',
      { resource: 'prod-db', reason: 'Incident 4711: read the slow-query log' },
      {
        requestState: first.result.requestState,
        inputResponses: { approval: { action: 'accept' } },
      },
    );
    expect(done.result.content[0].text).toContain('granted');
  });

  it('carol follows the flow round by round and verifies the trail', async () => {
    const carol = await signedIn('carol-token', { width: 1100, height: 900 });
    await carol.page.getByRole('link', { name: 'Flows' }).first().click();
    await carol.page.getByRole('textbox', { name: 'Tool', exact: true }).fill('request_access');
    await carol.page.getByRole('button', { name: 'Filter' }).click();
    await shot(carol.page, 'console-flows.png');
    await carol.page.locator('#flows-list a').first().click();
    expect(await carol.page.locator('h1').textContent()).toBe('Flow request_access');
    const rounds = carol.page.locator('#timeline > li');
    expect(await rounds.count()).toBeGreaterThan(2);
    expect(await carol.page.locator('#timeline').textContent()).toContain('complete');
    await shot(carol.page, 'console-flow-timeline.png');
    await carol.page.getByRole('link', { name: 'Audit integrity' }).click();
    await carol.page.getByRole('button', { name: /Verify the whole trail/ }).click();
    await carol.page.waitForURL(`${f.origin}/mrtr/console/audit`);
    expect(await carol.page.getByRole('status').textContent()).toMatch(/^Intact: \d+ events/);
    await shot(carol.page, 'console-audit.png');
    await carol.context.close();
  });
});
