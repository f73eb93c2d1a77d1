// --roles-claim: one rule reads roles from an access token and from a sign-in's ID token, so a person holds the
// same roles in their calls and on the console; the flag's mistakes are named.

import { describe, expect, it } from 'vitest';
import { rolesOf } from '../../src/auth/claims.js';
import { runCommand } from '../helpers/run-cli.js';

describe('roles from claims', () => {
  it('a top-level claim, a dotted path, an array or a space-separated string', () => {
    expect(rolesOf({ roles: ['approver', 'auditor'] }, 'roles')).toEqual(['approver', 'auditor']);
    expect(rolesOf({ realm_access: { roles: ['admin'] } }, 'realm_access.roles')).toEqual(['admin']);
    expect(rolesOf({ groups: 'ops  auditor' }, 'groups')).toEqual(['ops', 'auditor']);
    expect(rolesOf({ roles: [1, 'x', ''] }, 'roles')).toEqual(['x']);
    expect(rolesOf({}, 'roles')).toEqual([]);
    // Never a prototype's member.
    expect(rolesOf({}, '__proto__.constructor')).toEqual([]);
  });
});

const serve = (...args: string[]) =>
  runCommand(process.execPath, ['dist/cli/main.js', 'serve', '--port', '0', ...args], { encoding: 'utf8' });

describe('mrtr serve --roles-claim', () => {
  it('is for --issuer only, and must name a claim', async () => {
    const withTokens = await serve(
      '--tokens',
      'examples/workflows/tokens.json',
      '--resource',
      'http://127.0.0.1:1/mcp',
      '--roles-claim',
      'groups',
    );
    expect(withTokens.status).toBe(2);
    expect(withTokens.stderr).toContain(
      '--roles-claim is for --issuer: a development tokens file names the roles itself',
    );
    const alone = await serve('--roles-claim', 'groups');
    expect(alone.status).toBe(2);
    expect(alone.stderr).toContain('--roles-claim needs --tokens FILE or --issuer URL');
    const odd = await serve(
      '--issuer',
      'https://issuer.example',
      '--resource',
      'http://127.0.0.1:1/mcp',
      '--roles-claim',
      'a..b',
    );
    expect(odd.status).toBe(2);
    expect(odd.stderr).toContain(
      "--roles-claim must be a claim name or a dotted path (realm_access.roles), got 'a..b'",
    );
  });
});
