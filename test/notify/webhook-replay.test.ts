// A signed delivery sent twice inside its five-minute window is refused the second time (issue 37, item 6), on every
// store a receiver can share: memory (one process), a SQLite file two receivers open, Redis. Outside the window the
// timestamp rule judges it, as before, and the store has let the delivery go. Last, the example receiver of
// docs/human-controls.md gets a real delivery of our notifier, then the same bytes again.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { webhookReceiver } from '../../examples/webhook-receiver.js';
import type { ControlEvent } from '../../src/controls/index.js';
import {
  type ApprovalRequested,
  ID_HEADER,
  SIGNATURE_HEADER,
  signatureOf,
  TIMESTAMP_HEADER,
  verifyWebhook,
  WebhookNotifier,
  WebhookVerifyError,
} from '../../src/notify/index.js';
import { MemoryStore, RedisStore, type SharedStore, SqliteStore } from '../../src/stores/index.js';
import { TestRedis } from '../helpers/redis-server.js';

const SECRET = 'whsec-0123456789abcdef';
const BODY = JSON.stringify({ type: 'approval.requested', id: 'd-1', approval: { id: 'A' } });
const STAMP = 1_800_000_000;

/** A delivery as our notifier sends it: the id, the timestamp and the signature of `<timestamp>.<body>`. */
const delivery = (stamp = STAMP, id = 'd-1') => ({
  [ID_HEADER]: id,
  [TIMESTAMP_HEADER]: String(stamp),
  [SIGNATURE_HEADER]: signatureOf(SECRET, stamp, BODY),
});

/** What the receiver's check says: accepted, or the refusal's reason. */
async function verdict(seen: SharedStore, headers = delivery(), now = STAMP * 1000): Promise<string> {
  try {
    await verifyWebhook({ secret: SECRET, headers, body: BODY, seen, now: () => now });
    return 'accepted';
  } catch (error) {
    if (error instanceof WebhookVerifyError) return error.reason;
    throw error;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'mrtr-webhook-replay-'));
let redis: TestRedis;
const opened: SharedStore[] = [];
beforeAll(async () => {
  redis = await TestRedis.start();
});
afterAll(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => undefined);
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Two receivers' views of one store: the same object in memory, two handles on one SQLite file or one Redis. */
const STORES: Array<[string, () => Promise<[SharedStore, SharedStore]>]> = [
  [
    'memory',
    async () => {
      const store = new MemoryStore();
      return [store, store];
    },
  ],
  [
    'a SQLite file opened by two receivers',
    async () => {
      const path = join(dir, `seen-${opened.length}.db`);
      const pair: [SharedStore, SharedStore] = [new SqliteStore(path), new SqliteStore(path)];
      opened.push(...pair);
      return pair;
    },
  ],
  [
    'Redis shared by two receivers',
    async () => {
      const pair: [SharedStore, SharedStore] = [
        await RedisStore.connect(redis.url),
        await RedisStore.connect(redis.url),
      ];
      opened.push(...pair);
      return pair;
    },
  ],
];

describe.each(STORES)('verifyWebhook on %s', (name, open) => {
  it('refuses the same signed delivery the second time, at the same receiver or at another', async () => {
    const [a, b] = await open();
    // The same bytes each time; only the store knows they came before.
    const body = JSON.stringify({ type: 'approval.requested', id: name });
    const signed = { ...delivery(STAMP, name), [SIGNATURE_HEADER]: signatureOf(SECRET, STAMP, body) };
    const check = (seen: SharedStore, h: Record<string, string>) =>
      verifyWebhook({ secret: SECRET, headers: h, body, seen, now: () => STAMP * 1000 }).then(
        () => 'accepted',
        (e: unknown) => (e instanceof WebhookVerifyError ? e.reason : Promise.reject(e)),
      );
    expect(await check(a, signed)).toBe('accepted');
    expect(await check(a, signed)).toBe('replayed');
    expect(await check(b, signed)).toBe('replayed');
    // Another id in the header, which the signature does not cover, does not make it a new delivery.
    expect(await check(b, { ...signed, [ID_HEADER]: 'd-other' })).toBe('replayed');
  });
});

describe('verifyWebhook and the time window', () => {
  it('a retry of ours, signed anew at a later second, is accepted; a forged copy spends nothing', async () => {
    const seen = new MemoryStore();
    // A forgery first, with the real delivery's timestamp and body: refused, and not remembered.
    const forged = { ...delivery(), [SIGNATURE_HEADER]: signatureOf('not-the-secret-000', STAMP, BODY) };
    expect(await verdict(seen, forged)).toBe('bad_signature');
    expect(await verdict(seen)).toBe('accepted');
    expect(await verdict(seen, delivery(STAMP + 2), (STAMP + 2) * 1000)).toBe('accepted');
    expect(await verdict(seen, delivery(STAMP + 2), (STAMP + 3) * 1000)).toBe('replayed');
  });

  it('after the window the timestamp rule judges a delivery, as before, and the store has let it go', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(STAMP * 1000);
    // The store and the check read the same (fake) clock, as a receiver's would.
    const seen = new MemoryStore();
    expect(await verdict(seen, delivery(), Date.now())).toBe('accepted');
    vi.setSystemTime((STAMP + 300) * 1000);
    expect(await verdict(seen, delivery(), Date.now())).toBe('replayed');
    vi.setSystemTime((STAMP + 301) * 1000);
    expect(await verdict(seen, delivery(), Date.now())).toBe('stale');
    vi.setSystemTime((STAMP + 302) * 1000);
    expect(seen.size).toBe(0);
    expect(await verdict(seen, delivery(), Date.now())).toBe('stale');
  });

  it('a SQLite store forgets the delivery when its window closes', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(STAMP * 1000);
    const seen = new SqliteStore(join(dir, 'window.db'));
    opened.push(seen);
    expect(await verdict(seen, delivery(), Date.now())).toBe('accepted');
    vi.setSystemTime((STAMP + 300) * 1000 + 999);
    expect(await verdict(seen, delivery(), Date.now())).toBe('replayed');
    vi.setSystemTime((STAMP + 301) * 1000);
    expect(await verdict(seen, delivery(), Date.now())).toBe('stale');
    const key = createHash('sha256').update(`${STAMP}.${BODY}`).digest('base64url');
    expect(await seen.get(`mrtr/webhook-seen/${key}`)).toBeUndefined();
  });
});

describe('the example receiver (examples/webhook-receiver.ts)', () => {
  it('takes a real delivery once; the same bytes sent again get 409 and are not handled', async () => {
    // Our notifier delivers to a recorder, so the test holds the exact bytes an eavesdropper would.
    const recorded: Array<{ headers: Record<string, string>; body: string }> = [];
    const recorder = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        recorded.push({ headers: req.headers as Record<string, string>, body });
        res.end();
      });
    });
    const handled: ApprovalRequested[] = [];
    const seen = new SqliteStore(join(dir, 'receiver.db'));
    opened.push(seen);
    const receiver = webhookReceiver({ secret: SECRET, seen, onRequest: (a) => handled.push(a) });
    try {
      const [hookUrl, receiverUrl] = await Promise.all([listen(recorder), listen(receiver)]);
      const notifier = new WebhookNotifier({
        targets: [
          {
            name: 'approvers',
            url: new URL(hookUrl),
            roles: ['approver'],
            format: 'signed-json',
            secret: SECRET,
          },
        ],
      });
      notifier.notify(REQUESTED);
      await notifier.settled();
      const { headers, body } = recorded[0]!;
      const send = () =>
        fetch(receiverUrl, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            [ID_HEADER]: headers[ID_HEADER]!,
            [TIMESTAMP_HEADER]: headers[TIMESTAMP_HEADER]!,
            [SIGNATURE_HEADER]: headers[SIGNATURE_HEADER]!,
          },
          body,
        });
      expect((await send()).status).toBe(204);
      expect(handled.map((a) => a.reason)).toEqual(['Incident 4711']);
      expect((await send()).status).toBe(409);
      expect(handled).toHaveLength(1);
    } finally {
      recorder.close();
      receiver.close();
    }
  });
});

const REQUESTED: ControlEvent = {
  control: 'approval',
  action: 'requested',
  id: 'AAAAAAAAAAAAAAAA',
  by: 'alice',
  at: '2026-12-01T10:00:00.000Z',
  detail: {
    role: 'approver',
    reason: 'Incident 4711',
    requester: 'Alice',
    effect: { tool: 'request_access', resource: 'prod-db' },
    effectDigest: 'digest',
    approve: 1,
    expiresAt: '2026-12-02T10:00:00.000Z',
    url: 'https://mcp.example/mrtr/approvals/AAAAAAAAAAAAAAAA',
  },
};

async function listen(server: Server): Promise<string> {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}
