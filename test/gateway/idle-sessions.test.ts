// The pool of a 2025 upstream's idle sessions: taken by credential (the newest first), bounded (the longest idle is
// closed), and closed once idle too long.
import { describe, expect, it } from 'vitest';
import { IdleSessions } from '../../src/gateway/idle-sessions.js';

class FakeSession {
  closed = false;
  constructor(readonly name: string) {}
  async close() {
    this.closed = true;
  }
}

function pool(max = 3, maxIdleMs = 1000) {
  const clock = { now: 0 };
  return { clock, idle: new IdleSessions<FakeSession>({ max, maxIdleMs, now: () => clock.now }) };
}

describe('idle sessions', () => {
  it("give a key's newest session, and never another key's", () => {
    const { idle } = pool();
    const [a1, a2, b1] = [new FakeSession('a1'), new FakeSession('a2'), new FakeSession('b1')];
    idle.put('alice', a1);
    idle.put('alice', a2);
    idle.put('bob', b1);
    expect(idle.take('alice')).toBe(a2);
    expect(idle.take('carol')).toBeUndefined();
    expect(idle.take('alice')).toBe(a1);
    expect(idle.take('alice')).toBeUndefined();
    expect(idle.take('bob')).toBe(b1);
  });

  it('close the longest idle past the bound, unless a call waits for one', () => {
    const { idle } = pool(2);
    const s = [0, 1, 2, 3].map((i) => new FakeSession(`s${i}`));
    idle.put('', s[0] as FakeSession);
    idle.put('', s[1] as FakeSession);
    idle.put('', s[2] as FakeSession);
    expect(s.map((x) => x.closed)).toEqual([true, false, false, false]);
    idle.put('', s[3] as FakeSession, true);
    expect(idle.size).toBe(3);
  });

  it('close a session idle too long instead of giving it, and skip one the caller cannot use', () => {
    const { idle, clock } = pool(3, 1000);
    const [old, fresh, dead] = [new FakeSession('old'), new FakeSession('fresh'), new FakeSession('dead')];
    idle.put('', old);
    clock.now = 600;
    idle.put('', fresh);
    idle.put('', dead);
    clock.now = 1200;
    expect(idle.take('', (s) => s !== dead)).toBe(fresh);
    expect(old.closed).toBe(true);
    expect(idle.size).toBe(0);
  });
});
