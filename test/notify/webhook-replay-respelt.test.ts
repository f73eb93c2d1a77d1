// A replay sent with its headers spelt again: the timestamp `1800000000` also reads `0001800000000`, and the check
// signs `Number(stamp)`, so the signature still matches. The replay is the same delivery and must be refused.
import { describe, expect, it } from 'vitest';
import {
  ID_HEADER,
  SIGNATURE_HEADER,
  signatureOf,
  TIMESTAMP_HEADER,
  verifyWebhook,
  WebhookVerifyError,
} from '../../src/notify/index.js';
import { MemoryStore } from '../../src/stores/index.js';

const SECRET = 'whsec-0123456789abcdef';
const BODY = JSON.stringify({ type: 'approval.requested', id: 'd-1', approval: { id: 'A' } });
const STAMP = 1_800_000_000;

/** What the receiver's check says of one delivery: accepted, or the refusal's reason. */
async function verdict(seen: MemoryStore, headers: Record<string, string | string[]>): Promise<string> {
  try {
    await verifyWebhook({ secret: SECRET, headers, body: BODY, seen, now: () => STAMP * 1000 });
    return 'accepted';
  } catch (error) {
    if (error instanceof WebhookVerifyError) return error.reason;
    throw error;
  }
}

const signed = { [ID_HEADER]: 'd-1', [SIGNATURE_HEADER]: signatureOf(SECRET, STAMP, BODY) };

describe('a delivery replayed with its headers spelt another way is refused', () => {
  it.each([
    ['the timestamp with leading zeros', { ...signed, [TIMESTAMP_HEADER]: `00${STAMP}` }],
    ['the timestamp with one leading zero', { ...signed, [TIMESTAMP_HEADER]: `0${STAMP}` }],
    ['another id header', { ...signed, [ID_HEADER]: 'd-2', [TIMESTAMP_HEADER]: String(STAMP) }],
    [
      'the signature listed twice',
      {
        ...signed,
        [SIGNATURE_HEADER]: `${signed[SIGNATURE_HEADER]}, ${signed[SIGNATURE_HEADER]}`,
        [TIMESTAMP_HEADER]: String(STAMP),
      },
    ],
  ])('%s', async (_, replay) => {
    const seen = new MemoryStore();
    expect(await verdict(seen, { ...signed, [TIMESTAMP_HEADER]: String(STAMP) })).toBe('accepted');
    expect(await verdict(seen, replay)).toBe('replayed');
    await seen.close();
  });

  it('the leading-zero spelling first, then the plain one', async () => {
    const seen = new MemoryStore();
    expect(await verdict(seen, { ...signed, [TIMESTAMP_HEADER]: `00${STAMP}` })).toBe('accepted');
    expect(await verdict(seen, { ...signed, [TIMESTAMP_HEADER]: String(STAMP) })).toBe('replayed');
    await seen.close();
  });
});
