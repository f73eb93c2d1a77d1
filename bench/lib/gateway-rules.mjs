// The 100-rule gateway policy the benchmarks share: bench/gateway-policy.mjs decides with it in process, and the
// `gw-gateway-full` row of `npm run bench` serves it from a config file, so the two figures are about one policy.
// Ten upstreams, up0 … up9; tool globs, roles, scopes, CEL conditions on the arguments and the caller, controls with
// rate limits, and deny rules with and without conditions.

export const UPSTREAMS = Array.from({ length: 10 }, (_, i) => `up${i}`);
const ROLES = ['dev', 'ops', 'requester', 'approver', 'auditor'];
const CONDITIONS = [
  'has(args.path) && args.path.startsWith("/data/public")',
  'args.count < 100',
  '"ops" in caller.roles || caller.subject.endsWith("@example.com")',
  'has(args.name) && args.name.matches("^[a-z][a-z0-9_-]*$")',
  'args.items.all(i, i.qty > 0 && i.qty < 1000)',
  'tool.name.startsWith("read_") && size(args) < 10',
];

/** Who calls: a subject ending in @example.com, which one conditional allow rule of every upstream lets through. */
export const BENCH_CALLER = Object.freeze({
  subject: 'ann@example.com',
  issuer: 'https://id.example',
  roles: ['dev', 'requester'],
  scopes: ['files'],
});

/** 100 rules (PolicyRule objects): 40 plain allows, 25 conditional allows, 15 with controls and rate limits, 20 denies
 * (half conditional). */
export function benchRules() {
  const out = [];
  for (let i = 0; i < 40; i++)
    out.push({
      tools: [`${UPSTREAMS[i % 10]}/${['read_*', 'list_*', 'get_?', '*_file'][i % 4]}`],
      roles: [ROLES[i % ROLES.length]],
    });
  for (let i = 0; i < 25; i++)
    out.push({
      tools: [`${UPSTREAMS[i % 10]}/*`, `up${(i + 3) % 10}/search_*`],
      roles: ['*'],
      when: CONDITIONS[i % CONDITIONS.length],
    });
  for (let i = 0; i < 15; i++)
    out.push({
      tools: [`${UPSTREAMS[i % 10]}/write_*`],
      roles: [ROLES[i % 3]],
      scopes: ['files'],
      require: i % 3 === 0 ? ['approval', 'consent'] : ['consent'],
      ...(i % 3 === 0 ? { approval: { role: 'approver', approvals: 1 + (i % 2) } } : {}),
      rateLimit: { requests: 10, perMs: 60_000 },
    });
  for (let i = 0; i < 20; i++)
    out.push({
      tools: [`${UPSTREAMS[i % 10]}/*`],
      deny: true,
      ...(i % 2 === 0
        ? { when: 'has(args.path) && (args.path.startsWith("/data/secret") || args.path.contains("/.git/"))' }
        : { tools: [`${UPSTREAMS[i % 10]}/delete_*`] }),
    });
  return out;
}

/** The same rules as a config file writes them (`rateLimit: { requests, per }` with a duration). */
export function benchConfigRules() {
  return benchRules().map(({ rateLimit, ...rule }) =>
    rateLimit ? { ...rule, rateLimit: { requests: rateLimit.requests, per: `${rateLimit.perMs}ms` } } : rule,
  );
}
