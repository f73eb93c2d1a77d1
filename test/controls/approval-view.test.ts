// What a reviewer reads on the approval pages: labels, not field names, and plain words, not protocol terms.
import { describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '../../src/controls/approval-book.js';
import { decisionCard, factLabel, STATUS_TEXT } from '../../src/controls/approval-view.js';

const record: ApprovalRecord = {
  id: 'a1',
  requester: { subject: 'alice', issuer: 'urn:test', name: 'Alice' },
  flowId: 'f1',
  effect: {
    tool: 'grant_role',
    subject: 'carol',
    currentRoles: 'none',
    granted_by: 'alice',
    'valid-days': 3,
  },
  effectDigest: 'x'.repeat(43),
  reason: 'on-call rota',
  role: 'approver',
  approve: 1,
  deny: 1,
  createdAt: 0,
  expiresAt: 3_600_000,
  grantTtlMs: 3_600_000,
  votes: [],
  state: 'pending',
};

describe('the approval card', () => {
  it('labels each fact in words: "Current roles", not currentRoles', () => {
    const card = decisionCard(record).markup;
    for (const label of ['Tool', 'Subject', 'Current roles', 'Granted by', 'Valid days'])
      expect(card).toContain(`<th scope="row">${label}</th>`);
    expect(card).not.toMatch(/currentRoles|granted_by|valid-days/);
    expect(factLabel('effectDigestOfThing')).toBe('Effect digest of thing');
  });

  it('says what happens once approved in plain words (no "requester’s own request", no "retry")', () => {
    const card = decisionCard(record).markup;
    expect(card).toContain('Alice can then have it done once, from the same request');
    expect(card).not.toMatch(/requester|retry|digest/i);
    for (const text of Object.values(STATUS_TEXT)) expect(text).not.toMatch(/requester|retry/i);
  });
});
