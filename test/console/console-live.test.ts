// The live view's stream: a new request is news to approvers (and not to an auditor, who is told of rounds instead);
// a person holds a few streams at most. Each wait is for the stream's own message: no timing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_DEFAULTS } from '../../src/console/index.js';
import { type ConsoleFixture, startConsole, startConsoleInProcess } from './fixture.js';

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

  interface Stream {
    /** Resolves with the topics of the next `changed` events, once one names `topic`. */
    until(topic: string): Promise<string[]>;
    close(): void;
  }

  async function openStream(cookie: string): Promise<Stream> {
    const controller = new AbortController();
    const r = await fetch(`${f.origin}/mrtr/console/live`, {
      headers: { cookie },
      signal: controller.signal,
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/event-stream');
    const reader = r.body!.getReader();
    const seen: string[] = [];
    let buffer = '';
    return {
      async until(topic) {
        while (!seen.includes(topic)) {
          const { value, done } = await reader.read();
          if (done) throw new Error('stream ended');
          buffer += Buffer.from(value).toString('utf8');
          for (const m of buffer.matchAll(/event: changed\ndata: (\w+)\n\n/g)) seen.push(m[1]!);
          buffer = buffer.slice(buffer.lastIndexOf('\n\n') + 2);
        }
        return seen;
      },
      close: () => controller.abort(),
    };
  }

  describe('the live stream', () => {
    it('a new approval request reaches approvers; an auditor hears of the rounds only', async () => {
      const bob = await openStream(await f.cookie('bob'));
      const erin = await openStream(await f.cookie('erin'));
      await f.call('alice-token', 'request_access', { resource: 'prod-db', reason: 'live test' });
      expect(await bob.until('approvals')).toContain('approvals');
      const erinSaw = await erin.until('flows');
      expect(erinSaw).not.toContain('approvals');
      // Bob (approver only) is never told of flows: the stream only names topics a person's panels show.
      await f.call('alice-token', 'request_access', { resource: 'prod-db', reason: 'second' });
      expect(await bob.until('approvals')).not.toContain('flows');
      bob.close();
      erin.close();
    });

    it(`a person holds at most ${LIVE_DEFAULTS.maxStreamsPerPerson} streams; the next is 429 with Retry-After`, async () => {
      const cookie = await f.cookie('carol');
      const open: Stream[] = [];
      for (let i = 0; i < LIVE_DEFAULTS.maxStreamsPerPerson; i++) open.push(await openStream(cookie));
      const refused = await fetch(`${f.origin}/mrtr/console/live`, { headers: { cookie } });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('30');
      expect(await refused.text()).toContain('too many live views open');
      for (const s of open) s.close();
    });
  });
});

describe('stopping mrtr serve with a console open', () => {
  it('ends the live streams first, so the drain does not wait for them (a drain of 10 minutes here)', async () => {
    const g = await startConsole(['--drain-ms', '600000']);
    const r = await fetch(`${g.origin}/mrtr/console/live`, { headers: { cookie: await g.cookie('carol') } });
    const reader = r.body!.getReader();
    await reader.read(); // the stream's opening line
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return true;
    })();
    await g.stop();
    expect(await ended).toBe(true);
  });
});

describe('the live stream’s limits', () => {
  it('a person’s cap leaves others their streams; the cap in all refuses everyone', async () => {
    const g = await startConsoleInProcess({ live: { maxStreams: 3, maxStreamsPerPerson: 2 } });
    const controllers: AbortController[] = [];
    const open = async (who: string) => {
      const c = new AbortController();
      controllers.push(c);
      const r = await fetch(`${g.origin}/mrtr/console/live`, {
        headers: { cookie: await g.cookie(who) },
        signal: c.signal,
      });
      if (r.status !== 200) await r.text();
      return r.status;
    };
    try {
      expect([await open('carol'), await open('carol'), await open('carol')]).toEqual([200, 200, 429]);
      // A tab closed gives its place back, once the server hears the stream end (asked again until it has).
      controllers[0]!.abort();
      let again = 429;
      for (let i = 0; i < 1000 && again === 429; i++) again = await open('carol');
      expect(again).toBe(200);
      expect(await open('bob')).toBe(200);
      // Three open in all: erin, who holds none, is refused too.
      expect(await open('erin')).toBe(429);
    } finally {
      for (const c of controllers) c.abort();
      await g.stop();
    }
  });
});
