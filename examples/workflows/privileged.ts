// Privileged action: `grant_role` gives a person a role from the directory, behind all three human controls — the
// caller's consent to the exact grant (who, which role, the roles they hold now), a step-up with the caller's TOTP
// code on the server's own page, then a four-eyes approval by another person with the role `approver`. The grant is
// written once: the flow id is the grants table's key, and the consent executes once per flow.
import type { HumanControls } from 'mrtr/controls';
import { type McpServer, type RequestContext, text } from 'mrtr/server';
import { z } from 'zod';
import { type Db, openDatabase, pick } from './db.js';

export const ROLES = ['deployer', 'db-admin', 'auditor', 'billing-admin', 'support', 'on-call'] as const;
const DEMO_PEOPLE = [
  ['alice', 'Alice'],
  ['bob', 'Bob'],
  ['carol', 'Carol'],
] as const;

export function openPrivileged(dataDir: string): Db {
  return openDatabase(dataDir, {
    file: 'iam.db',
    schema: `
      CREATE TABLE IF NOT EXISTS people (subject TEXT PRIMARY KEY, name TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS role_assignments (subject TEXT NOT NULL REFERENCES people(subject),
        role TEXT NOT NULL, PRIMARY KEY (subject, role));
      CREATE TABLE IF NOT EXISTS role_grants (flow_id TEXT PRIMARY KEY, subject TEXT NOT NULL, role TEXT NOT NULL,
        granted_by TEXT NOT NULL, approved_by TEXT NOT NULL, at TEXT NOT NULL);`,
    seed(db, random) {
      const person = db.prepare('INSERT INTO people (subject, name) VALUES (?, ?)');
      const assign = db.prepare('INSERT OR IGNORE INTO role_assignments (subject, role) VALUES (?, ?)');
      for (const [subject, name] of DEMO_PEOPLE) person.run(subject, name);
      for (let i = 1; i <= 3000; i++) {
        person.run(`user${i}`, `User ${i}`);
        const held = Math.floor(random() * 3);
        for (let r = 0; r < held; r++) assign.run(`user${i}`, pick(ROLES, random));
      }
    },
  });
}

const Input = z.object({
  subject: z.string().min(1).max(100).describe('Who receives the role (e.g. bob, user42)'),
  role: z.enum(ROLES),
});

/** Each check while the approval is pending is a round; the state must outlive a day's wait. */
const WAITS_FOR_PEOPLE = { maxRounds: 1000, stateTtlMs: 25 * 60 * 60 * 1000 } as const;

export function registerPrivileged(server: McpServer, db: Db, controls: HumanControls): void {
  const person = db.prepare<[string], { name: string }>('SELECT name FROM people WHERE subject = ?');
  const rolesOf = db.prepare<[string], { role: string }>(
    'SELECT role FROM role_assignments WHERE subject = ? ORDER BY role',
  );
  const assign = db.prepare('INSERT OR IGNORE INTO role_assignments (subject, role) VALUES (?, ?)');
  const logGrant = db.prepare(
    `INSERT INTO role_grants (flow_id, subject, role, granted_by, approved_by, at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (flow_id) DO NOTHING`,
  );
  server.tool(
    {
      name: 'grant_role',
      title: 'Grant a role',
      description:
        'Grants a role to a person: asks your consent to the exact grant, your second factor, then an approver’s decision',
      input: Input,
      ...WAITS_FOR_PEOPLE,
    },
    async ({ subject, role }, ctx: RequestContext) => {
      const caller = ctx.principal;
      if (!caller?.issuer || !server.signIn)
        return text('grant_role needs an authenticated caller: serve with --tokens FILE (or --issuer URL)', {
          isError: true,
        });
      if (!person.get(subject)) return text(`No person ${subject} in the directory`, { isError: true });
      // The effect from facts read now; read again at every round and at the moment of execution.
      const effectNow = () => ({
        tool: 'grant_role',
        subject,
        role,
        currentRoles:
          rolesOf
            .all(subject)
            .map((r) => r.role)
            .join(', ') || 'none',
        grantedBy: caller.subject,
      });
      const before = effectNow();
      if (before.currentRoles.split(', ').includes(role))
        return text(`${subject} already has the role ${role}`, { isError: true });
      const consent = await controls.consent(ctx, {
        effect: before,
        message: `Grant the role ${role} to ${subject}?`,
      });
      await controls.stepUp(ctx, { reason: `Grant the role ${role} to ${subject}` });
      const grant = await controls.approval(ctx, {
        role: 'approver',
        reason: `${caller.subject} grants the role ${role} to ${subject}`,
        risk: 'high',
        effect: effectNow(),
      });
      const approvedBy = grant.approvedBy.join(', ');
      return consent.execute(effectNow(), () => {
        db.transaction(() => {
          const logged = logGrant.run(
            ctx.flowId,
            subject,
            role,
            caller.subject,
            approvedBy,
            new Date().toISOString(),
          );
          if (logged.changes === 1) assign.run(subject, role);
        })();
        ctx.audit.note({ granted: { subject, role, approvedBy } });
        return text(`Granted ${role} to ${subject} (approved by ${approvedBy})`);
      });
    },
  );
}
