// Identity attributes end to end: update_profile asks what is missing or invalid, with validation, and again while
// an answer is wrong; checked in the identity database. Then the attacks.
import { type InputQuestion, scriptedResolver } from 'mrtr/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attackSuite } from './attacks.js';
import { accept, startWorkflows, type WorkflowsServer } from './workflows-server.js';

let s: WorkflowsServer;
beforeAll(async () => {
  s = await startWorkflows();
});
afterAll(() => s.stop());

const profile = (subject: string) =>
  s.query<{ department: string | null; recovery_email: string | null }>(
    'identity.db',
    'SELECT department, recovery_email FROM profiles WHERE subject = ?',
    subject,
  )[0];
const changes = () =>
  s.query<{ n: number }>('identity.db', 'SELECT count(*) AS n FROM profile_changes')[0]!.n;
const schemaOf = (q: InputQuestion) =>
  (q.request.params as { requestedSchema: { properties: Record<string, Record<string, unknown>> } })
    .requestedSchema.properties;

describe('update_profile', () => {
  it('asks both missing attributes in one round, re-asks an invalid email and a company address, then saves once', async () => {
    expect(profile('alice')).toBeUndefined(); // a new starter: nothing in the directory yet
    const seen: InputQuestion[] = [];
    let badFormat = true;
    const client = s.client('alice', [
      scriptedResolver({
        department: (q) => {
          seen.push(q);
          return accept({ department: 'engineering' });
        },
        // The first answer is not an email: the server says so and asks the same question again.
        'recovery-1': (q) => {
          seen.push(q);
          const answer = badFormat ? 'not an email' : 'alice@corp.example';
          badFormat = false;
          return accept({ recoveryEmail: answer });
        },
        'recovery-2': (q) => {
          seen.push(q);
          return accept({ recoveryEmail: 'alice@home.example' });
        },
      }),
    ]);
    const outcome = await client.callTool('update_profile', {});
    expect(outcome.status).toBe('complete');
    if (outcome.status !== 'complete') return;
    expect(outcome.result.isError).toBeFalsy();
    expect(outcome.rounds).toBe(4);
    // Round 1 asked both at once; the department form offers exactly the directory's departments.
    expect(seen.slice(0, 2).map((q) => q.key)).toEqual(['department', 'recovery-1']);
    expect(schemaOf(seen[0]!).department!.enum).toEqual([
      'engineering',
      'finance',
      'legal',
      'marketing',
      'operations',
      'people',
      'sales',
      'security',
      'support',
    ]);
    expect(schemaOf(seen[1]!).recoveryEmail!.format).toBe('email');
    expect(seen[2]!.message).toContain('Your previous answer was not valid');
    expect(seen[3]!.message).toContain('alice@corp.example is a company address');
    expect(profile('alice')).toEqual({ department: 'engineering', recovery_email: 'alice@home.example' });
  });

  it('asks only for what is invalid: a department not in the list', async () => {
    const before = changes();
    const seen: string[] = [];
    const client = s.client('bob', [
      scriptedResolver({
        department: (q) => {
          seen.push(q.message ?? '');
          return accept({ department: 'finance' });
        },
      }),
    ]);
    const outcome = await client.callTool('update_profile', {
      department: 'Finance & Co',
      recoveryEmail: 'bob@home.example',
    });
    expect(outcome).toMatchObject({ status: 'complete', rounds: 2 });
    expect(seen).toEqual(['Department "Finance & Co" is not valid.']);
    expect(profile('bob')).toEqual({ department: 'finance', recovery_email: 'bob@home.example' });
    expect(changes()).toBe(before + 1);
  });

  it('ends with nothing changed after three company addresses', async () => {
    const before = changes();
    const client = s.client('carol', [
      scriptedResolver({}, { fallback: () => accept({ recoveryEmail: 'carol@corp.example' }) }),
    ]);
    const outcome = await client.callTool('update_profile', { department: 'security' });
    expect(outcome.status).toBe('complete');
    if (outcome.status === 'complete') expect(outcome.result.isError).toBe(true);
    expect(changes()).toBe(before);
    expect(profile('carol')).toBeUndefined();
  });

  it('keeps the recovery address out of the audit trail (a sensitive field)', async () => {
    const events = (await s.audit()).filter((e) => e.target === 'update_profile');
    expect(events.length).toBeGreaterThan(0);
    expect(JSON.stringify(events)).not.toContain('home.example');
  });
});

describe('update_profile under attack', () => {
  attackSuite(
    () => s,
    () => ({
      tool: 'update_profile',
      owner: 'bob',
      intruder: 'alice',
      args: { department: 'nowhere' },
      changedArgs: { department: 'finance' },
      first: { department: accept({ department: 'sales' }) },
      other: { department: accept({ department: 'legal' }) },
      later: { 'recovery-2': accept({ recoveryEmail: 'bob@home.example' }) },
      rest: () => ({}),
      effects: changes,
    }),
  );
});
