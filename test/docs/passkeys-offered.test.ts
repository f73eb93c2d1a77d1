// The docs say what the server offers: passkeys (WebAuthn) work at /mrtr/passkeys and on the step-up page, so no page
// of README.md or docs/ may say again that WebAuthn or passkeys are not offered (two did, long after they shipped).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '../..');
const FILES = [
  'README.md',
  ...readdirSync(join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** A sentence that names WebAuthn or passkeys and says they are missing. */
const DENIAL =
  /(webauthn|passkeys?)[^.]{0,80}\b(not (offered|supported|available|implemented)|unsupported|not yet)|\b(no|without) (webauthn|passkey) support/i;

describe('passkeys in the docs', () => {
  it('no page says WebAuthn or passkeys are not offered', () => {
    const found = FILES.flatMap((file) =>
      readFileSync(join(REPO, file), 'utf8')
        .split(/\n\s*\n/)
        .map((paragraph) => paragraph.replace(/\s+/g, ' '))
        .filter((paragraph) => DENIAL.test(paragraph))
        .map((paragraph) => `${file}: ${DENIAL.exec(paragraph)?.[0]}`),
    );
    expect(found).toEqual([]);
  });

  it('the check catches the sentences that were there', () => {
    expect(DENIAL.test('a phishing-resistant factor (WebAuthn) is not offered yet.')).toBe(true);
    expect(DENIAL.test('- WebAuthn is not offered yet: TOTP is the one second factor.')).toBe(true);
  });
});
