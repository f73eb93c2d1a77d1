// --console-role: which token roles grant which console role; every mistake is a message naming the flag.

import { describe, expect, it } from 'vitest';
import {
  ConsoleUsageError,
  consoleRolesOf,
  DEFAULT_CONSOLE_ROLES,
  OperatorConsole,
  parseConsoleRoles,
} from '../../src/console/index.js';
import { runCommand } from '../helpers/run-cli.js';

describe('console roles', () => {
  it('by default each console role is granted by the role of its own name', () => {
    expect([...consoleRolesOf(['approver', 'finance'], DEFAULT_CONSOLE_ROLES)]).toEqual(['approver']);
    expect([...consoleRolesOf(['auditor', 'admin'], DEFAULT_CONSOLE_ROLES)]).toEqual(['auditor', 'admin']);
    expect(consoleRolesOf([], DEFAULT_CONSOLE_ROLES).size).toBe(0);
  });

  it('a mapping replaces the default of the console roles it names, and adds up over flags', () => {
    const map = parseConsoleRoles(['auditor=sec-team', 'auditor=compliance', 'approver=sre-leads,oncall']);
    expect(map).toEqual({
      approver: ['sre-leads', 'oncall'],
      auditor: ['sec-team', 'compliance'],
      admin: ['admin'],
    });
    expect([...consoleRolesOf(['oncall'], map as never)]).toEqual(['approver']);
    // The old name no longer grants a role the operator mapped elsewhere.
    expect(consoleRolesOf(['auditor'], map as never).size).toBe(0);
  });

  it('each mistake is named', () => {
    expect(parseConsoleRoles(['boss=x'])).toBe(
      "--console-role must be ROLE=NAME[,NAME] with ROLE one of approver, auditor, admin, got 'boss=x'",
    );
    expect(parseConsoleRoles(['auditor'])).toMatch(/^--console-role must be ROLE=NAME/);
    expect(parseConsoleRoles(['auditor=a b'])).toBe(
      "--console-role auditor: a role name is 1-100 letters, digits or . _ : / -, got 'a b'",
    );
    expect(parseConsoleRoles(['admin=ok,'])).toMatch(/^--console-role admin: a role name/);
    // The whole flag is one mapping: no prefix, no second line.
    expect(parseConsoleRoles(['1admin=x'])).toMatch(/^--console-role must be ROLE=NAME/);
    expect(parseConsoleRoles(['admin=x\nauditor=y'])).toMatch(/^--console-role must be ROLE=NAME/);
  });

  it('names are trimmed, and the first mapping of a role starts from nothing', () => {
    expect(parseConsoleRoles(['admin= ops , platform'])).toEqual({
      approver: ['approver'],
      auditor: ['auditor'],
      admin: ['ops', 'platform'],
    });
  });

  it('mrtr serve exits 2 naming the flag', async () => {
    const r = await runCommand(
      process.execPath,
      [
        'dist/cli/main.js',
        'serve',
        '--tokens',
        'examples/workflows/tokens.json',
        '--port',
        '0',
        '--resource',
        'http://127.0.0.1:1/mcp',
        '--console-role',
        'root=x',
      ],
      { encoding: 'utf8' },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      "mrtr serve: --console-role must be ROLE=NAME[,NAME] with ROLE one of approver, auditor, admin, got 'root=x'",
    );
  });
});

describe('panels', () => {
  const panel = (id: string) => ({ id, title: id, roles: ['admin'] as const, handle: async () => {} });
  const host = { signIn: undefined, bearerAuth: undefined, page: () => undefined };
  it('each needs a lowercase id of its own, and not the live stream’s', () => {
    for (const ids of [['Flows'], ['live'], ['flows', 'flows'], ['a-b'], ['']]) {
      const c = new OperatorConsole({ panels: ids.map(panel) });
      expect(() => c.attach(host), ids.join(',')).toThrow(ConsoleUsageError);
    }
    expect(() =>
      new OperatorConsole({ panels: [panel('flows'), panel('audit')] }).attach(host),
    ).not.toThrow();
  });
});
