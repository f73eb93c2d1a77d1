// Who may do what in the console. A console role is held through one of the roles a person's token (or sign-in)
// carries; which of those roles count is the operator's choice, since every issuer names its groups differently.
import type { ConsoleRole } from './panel.js';

/** For each console role, the roles (from the token's roles claim) that grant it. */
export type ConsoleRoles = Readonly<Record<ConsoleRole, readonly string[]>>;

export const CONSOLE_ROLES: readonly ConsoleRole[] = ['approver', 'auditor', 'admin'];

/** Each console role is granted by the role of the same name, unless the operator maps it otherwise. */
export const DEFAULT_CONSOLE_ROLES: ConsoleRoles = Object.freeze({
  approver: ['approver'],
  auditor: ['auditor'],
  admin: ['admin'],
});

export function consoleRolesOf(held: readonly string[], map: ConsoleRoles): Set<ConsoleRole> {
  const out = new Set<ConsoleRole>();
  for (const role of CONSOLE_ROLES) if (map[role].some((r) => held.includes(r))) out.add(role);
  return out;
}

/**
 * `--console-role approver=sre-leads,oncall`: the roles that grant a console role, or a message naming what is
 * wrong. Several flags add up; a console role not named keeps its default.
 */
export function parseConsoleRoles(specs: readonly string[]): ConsoleRoles | string {
  const map: Record<ConsoleRole, string[]> = { approver: [], auditor: [], admin: [] };
  const named = new Set<ConsoleRole>();
  for (const spec of specs) {
    const m = /^([a-z]+)=(.+)$/.exec(spec);
    if (!m || !CONSOLE_ROLES.includes(m[1] as ConsoleRole))
      return `--console-role must be ROLE=NAME[,NAME] with ROLE one of ${CONSOLE_ROLES.join(', ')}, got '${spec}'`;
    const names = m[2]!.split(',').map((n) => n.trim());
    if (names.some((n) => !/^[\w.:/-]{1,100}$/.test(n)))
      return `--console-role ${m[1]}: a role name is 1-100 letters, digits or . _ : / -, got '${m[2]}'`;
    map[m[1] as ConsoleRole].push(...names);
    named.add(m[1] as ConsoleRole);
  }
  for (const role of CONSOLE_ROLES) if (!named.has(role)) map[role] = [...DEFAULT_CONSOLE_ROLES[role]];
  return map;
}
