// Headless Chromium from Debian's package, driven by playwright-core (no browser download: none is reachable).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = process.env.MRTR_CHROMIUM ?? '/usr/bin/chromium';
/** Where browser tests keep their screenshots (not committed; CI keeps the folder as an artefact). */
export const ARTEFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts');

export async function launchChromium(): Promise<Browser> {
  mkdirSync(ARTEFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // As root, without a GPU, and with no network but loopback: nothing may reach out on its own.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
