// What `npm start` (`mrtr serve --fixture demo`) prints once it listens: one `./bin/mrtr call` line per workflow,
// the approvals inbox and the audit trail, so a person trying it has something to type. The VM ids are the demo
// owners' machines the cloud database seeds (the same on every fresh data directory).

/** Single-quoted for a POSIX shell: the JSON below has no single quote. */
const q = (json: unknown) => `'${JSON.stringify(json)}'`;

/** The calls, each as `mrtr call` arguments after the URL (the test runs every one). */
export const DEMO_CALLS: ReadonlyArray<{ what: string; args: string }> = [
  {
    what: 'helpdesk: the category is asked, likeliest first (answered here)',
    args: `create_ticket --token alice-dev-token --args ${q({ title: 'VPN drops every hour', description: 'The VPN client disconnects on the office network' })} --answers ${q({ category: 'network' })}`,
  },
  {
    what: 'identity: a missing recovery contact is asked, with validation',
    args: `update_profile --token alice-dev-token --args ${q({ department: 'engineering' })} --answers ${q({ 'recovery-1': { recoveryEmail: 'alice@home.example' } })}`,
  },
  {
    what: 'documents: too many matches, narrowed with facets of the actual matches',
    args: `search_documents --token carol-dev-token --args ${q({ query: 'backup' })} --answers ${q({ 'narrow-1': { kind: 'policy', year: '2025' }, 'narrow-2': { department: 'support' } })}`,
  },
  {
    what: "cloud: which VM, among alice's own",
    args: `resize_vm --token alice-dev-token --args ${q({ size: 'large' })} --answers ${q({ vm: 'vm-00003' })}`,
  },
  {
    what: 'cloud: delete needs your consent to the VM as it is now (in a terminal)',
    args: `delete_vm --token alice-dev-token --args ${q({ vmId: 'vm-00006' })}`,
  },
  {
    what: 'privileged: consent, your TOTP code on the server page, then bob approves (in a terminal)',
    args: `grant_role --token alice-dev-token --args ${q({ subject: 'carol', role: 'on-call' })}`,
  },
  {
    what: 'the example: resolve a bug in three rounds',
    args: `resolve_bug --token bob-dev-token --args ${q({ id: 42 })} --answers ${q({ resolution: 'Fixed', confirm: 'yes' })}`,
  },
];

/** `vkey`: the audit trail's verifier key, when it has one, so the printed verify line runs as printed. */
export function demoHelp(url: string, totpFile: string, vkey?: string): string {
  const origin = new URL(url).origin;
  return [
    '',
    'Try it (tokens: alice-dev-token requester, bob-dev-token approver, carol-dev-token approver and admin):',
    ...DEMO_CALLS.flatMap((c) => [`  # ${c.what}`, `  ./bin/mrtr call ${url} ${c.args}`]),
    '',
    `Before grant_role, enrol alice's second factor: ./bin/mrtr users totp alice --totp ${totpFile}`,
    `Operator's console (sign in with carol-dev-token, admin: approvals, flows, audit integrity): ${origin}/mrtr/console`,
    `Approvals inbox (sign in with bob-dev-token): ${origin}/mrtr/approvals`,
    `  or its JSON API: curl -H 'authorization: Bearer bob-dev-token' ${origin}/mrtr/approvals`,
    'Every round on the record: ./bin/mrtr audit flows --audit sqlite:./data/audit.db',
    '  then one flow round by round: ./bin/mrtr audit show FLOW_ID --audit sqlite:./data/audit.db',
    ...(vkey
      ? [
          `  and check nothing was edited: ./bin/mrtr audit verify --audit sqlite:./data/audit.db --vkey ${vkey}`,
        ]
      : []),
    '',
  ].join('\n');
}
