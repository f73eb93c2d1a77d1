#!/usr/bin/env node
// The person of the OAuth interop test: headless Chromium (Debian's, driven by playwright-core) opens the sign-in
// link, signs in on oidc-provider's development pages, consents, and follows the redirect back to `mrtr call`.
import { writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [url] = process.argv.slice(2);
const log = process.env.MRTR_TEST_BROWSER_LOG;
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-dev-shm-usage',
  ],
});
const steps = [];
try {
  const page = await browser.newPage();
  await page.goto(url);
  for (let i = 0; i < 6; i++) {
    const text = await page.textContent('body');
    steps.push(page.url().replace(/\?.*/, ''));
    if (text?.includes('Signed in.')) break;
    if (await page.$('input[name="login"]')) {
      await page.fill('input[name="login"]', 'ann');
      await page.fill('input[name="password"]', 'any');
    }
    const button = await page.$('button[type="submit"], button');
    if (!button) break;
    await Promise.all([page.waitForNavigation(), button.click()]);
  }
} finally {
  if (log) writeFileSync(log, JSON.stringify(steps));
  await browser.close();
}
