// Identity attributes: `update_profile` sets the caller's department and recovery contact. A required attribute
// that is missing or invalid is asked with validation — a department from the directory's list, an email address —
// and asked again while the answer is wrong. Each caller edits only their own profile.
import { elicitationForm } from 'mrtr/flow';
import { type McpServer, type RequestContext, text } from 'mrtr/server';
import { z } from 'zod';
import { type Db, openDatabase, pick } from './db.js';

export const DEPARTMENTS = [
  'engineering',
  'finance',
  'legal',
  'marketing',
  'operations',
  'people',
  'sales',
  'security',
  'support',
] as const;

/** The company's own domain: a recovery contact there is lost together with the account it should recover. */
export const COMPANY_DOMAIN = 'corp.example';

export function openIdentity(dataDir: string): Db {
  return openDatabase(dataDir, {
    file: 'identity.db',
    schema: `
      CREATE TABLE IF NOT EXISTS departments (name TEXT PRIMARY KEY);
      CREATE TABLE IF NOT EXISTS profiles (subject TEXT PRIMARY KEY, department TEXT REFERENCES departments(name),
        recovery_email TEXT, updated_at TEXT);
      CREATE TABLE IF NOT EXISTS profile_changes (flow_id TEXT PRIMARY KEY, subject TEXT NOT NULL,
        department TEXT NOT NULL, recovery_email TEXT NOT NULL, changed_at TEXT NOT NULL);`,
    seed(db, random) {
      const dept = db.prepare('INSERT INTO departments (name) VALUES (?)');
      for (const d of DEPARTMENTS) dept.run(d);
      const profile = db.prepare(
        'INSERT INTO profiles (subject, department, recovery_email) VALUES (?, ?, ?)',
      );
      for (let i = 0; i < 3000; i++) {
        // A tenth of the directory has never filled in its department or recovery contact.
        const incomplete = random() < 0.1;
        profile.run(
          `user${i}`,
          incomplete ? null : pick(DEPARTMENTS, random),
          incomplete ? null : `u${i}@home.example`,
        );
      }
    },
  });
}

const Input = z.object({
  department: z.string().max(100).optional(),
  recoveryEmail: z
    .string()
    .max(254)
    .optional()
    .describe('An address outside the company, for account recovery'),
});

const DepartmentForm = elicitationForm(
  z.object({ department: z.enum(DEPARTMENTS).meta({ title: 'Department' }) }),
);
const RecoveryForm = elicitationForm(
  z.object({ recoveryEmail: z.email().meta({ title: 'Recovery email (outside the company)' }) }),
);
const isEmail = (s: string) => z.email().safeParse(s).success;
const isExternal = (s: string) => !s.toLowerCase().endsWith(`@${COMPANY_DOMAIN}`);

/** Tries at an external recovery address; past them the call ends and nothing changes. */
const RECOVERY_TRIES = 3;

export function registerIdentity(server: McpServer, db: Db): void {
  const allowed = new Set(
    db
      .prepare<[], { name: string }>('SELECT name FROM departments')
      .all()
      .map((r) => r.name),
  );
  const current = db.prepare<[string], { department: string | null; recovery_email: string | null }>(
    'SELECT department, recovery_email FROM profiles WHERE subject = ?',
  );
  const apply = db.transaction((flowId: string, subject: string, department: string, email: string) => {
    const now = new Date().toISOString();
    const change = db
      .prepare(
        `INSERT INTO profile_changes (flow_id, subject, department, recovery_email, changed_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT (flow_id) DO NOTHING`,
      )
      .run(flowId, subject, department, email, now);
    if (change.changes === 0) return; // this flow's change is already in
    db.prepare(
      `INSERT INTO profiles (subject, department, recovery_email, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (subject) DO UPDATE SET department = excluded.department,
         recovery_email = excluded.recovery_email, updated_at = excluded.updated_at`,
    ).run(subject, department, email, now);
  });

  server.tool(
    {
      name: 'update_profile',
      title: 'Update my profile',
      description: 'Sets your department and recovery email; asks for whichever is missing or invalid',
      input: Input,
      sensitive: ['recoveryEmail'],
    },
    async (args, ctx: RequestContext) => {
      const subject = ctx.principal?.subject;
      if (!subject) return text('Sign in first: a profile belongs to a person', { isError: true });
      const now = current.get(subject);
      const department = args.department ?? now?.department ?? undefined;
      const email = args.recoveryEmail ?? now?.recovery_email ?? undefined;
      const departmentOk = department !== undefined && allowed.has(department);
      const emailOk = email !== undefined && isEmail(email) && isExternal(email);
      // Both questions go out in one round when both are needed: neither depends on the other.
      const [dept, first] = await Promise.all([
        departmentOk
          ? department
          : ctx.ask
              .form(why('Department', department), DepartmentForm, { key: 'department' })
              .then((c) => c.department),
        emailOk
          ? email
          : ctx.ask
              .form(why('Recovery email', email), RecoveryForm, { key: 'recovery-1' })
              .then((c) => c.recoveryEmail),
      ]);
      const recovery = await externalAddress(ctx, first);
      if (recovery === undefined)
        return text(`Profile unchanged: no recovery address outside ${COMPANY_DOMAIN}`, { isError: true });
      await ctx.ask.step('update-profile', () => apply(ctx.flowId, subject, dept, recovery));
      return text(`Profile of ${subject} updated: department ${dept}, recovery contact set`);
    },
  );
}

const why = (field: string, value: string | undefined) =>
  value === undefined || value === '' ? `${field} is missing.` : `${field} "${value}" is not valid.`;

/** The form checks the address's format; this checks the rule a schema cannot say, and asks again. */
async function externalAddress(ctx: RequestContext, first: string): Promise<string | undefined> {
  let email = first;
  for (let attempt = 2; !isExternal(email); attempt++) {
    if (attempt > RECOVERY_TRIES) return undefined;
    const answer = await ctx.ask.form(
      `${email} is a company address: it would be lost with the account. Recovery email outside ${COMPANY_DOMAIN}?`,
      RecoveryForm,
      { key: `recovery-${attempt}` },
    );
    email = answer.recoveryEmail;
  }
  return email;
}
