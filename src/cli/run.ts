// Command dispatch for `mrtr`: each command lives in its own file, loaded only when it runs. A static import of
// every command made each start load the server, the gateway and the controls (about a second), even for `mrtr call`.
type Command = (argv: string[]) => number | undefined | Promise<number | undefined>;

const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).serveCommand,
  gateway: async () => (await import('./gateway.js')).gatewayCommand,
  tools: async () => (await import('./tools.js')).toolsCommand,
  call: async () => (await import('./call.js')).callCommand,
  prompt: async () => (await import('./prompt.js')).promptCommand,
  task: async () => (await import('./task.js')).taskCommand,
  read: async () => (await import('./read.js')).readCommand,
  keys: async () => (await import('./keys.js')).keysCommand,
  audit: async () => (await import('./audit.js')).auditCommand,
  users: async () => (await import('./users.js')).usersCommand,
  'conformance-client': async () => (await import('./conformance-client.js')).conformanceClientCommand,
};

const USAGE = `usage: mrtr <command> [options]

commands:
  serve [--fixture example|conformance|workflows [--data DIR]] [--host H] [--port P] [--stdio] [--state-keys SPEC] [--drain-ms MS]
        [--store memory|sqlite:PATH|redis://HOST:PORT/DB] [--audit sqlite:PATH|postgres://…|jsonl:PATH|-]
        [--audit-instance NAME] [--audit-key-file PATH] [--modern-only]
        serve an MCP 2026-07-28 server that also serves 2025-era clients (2025-11-25, 2025-06-18, 2025-03-26:
        initialize, sessions, their questions as server-to-client requests) unless --modern-only; prints
        "listening on <url>" when ready; the workflows fixture keeps its SQLite databases under --data (default
        ./data), made and seeded on first start;
        requestState keys come from --state-keys or MRTR_STATE_KEYS (kid:secret,...; first = current), or from
        --state-keys-file PATH (made with mode 0600 on first use: for one machine);
        --store makes every requestState single-use (the replay guard); SQLite for one machine, Redis for a fleet
        (where it also carries 2025 clients' answers to the instance waiting for them);
        --audit records every round before answering it (signing key: MRTR_AUDIT_KEY; mrtr audit keygen; or
        --audit-key-file PATH, made with mode 0600 on first use: for one machine);
        on SIGTERM/SIGINT, requests in progress get --drain-ms (default 10000) to finish;
        [--task-ttl-ms MS] [--max-tasks N]: how long a task is kept (default 86400000, a day) and how many
        unfinished tasks one person may have (default 100, at most 10000)
        [--tokens FILE [--insecure-dev-tokens]] | [--issuer URL --audience AUD [--jwks-uri URL] [--client-id ID]
        [--roles-claim NAME]] [--resource URL] [--scopes "a b"]
        every request needs a bearer token: development tokens from FILE (loopback only unless forced), or JWT access
        tokens from an OAuth issuer for audience AUD; 401 + WWW-Authenticate and /.well-known/oauth-protected-resource
        say where to get one; people sign in to the server's pages at /mrtr/signin (with --tokens: their own
        development token; --client-id: OpenID sign-in, secret in MRTR_CLIENT_SECRET); --roles-claim: the claim
        holding roles (default roles; a dotted path such as realm_access.roles reaches a nested one)
        [--notify FILE]  webhooks (signed JSON or Slack) told of each approval request (docs/human-controls.md)
        [--console-role ROLE=NAME[,NAME]]...  the operator's console at /mrtr/console (on when people can sign
        in): which token roles grant its roles approver, auditor and admin (default: the role of the same name)
        [--totp FILE]  the TOTP secrets for step-up (default data/totp.json); the example's request_access and
        grant_role keep approvals and step-ups in --store (else in memory); the inbox is /mrtr/approvals
        [--metrics PORT [--metrics-host H]]  Prometheus metrics at http://127.0.0.1:PORT/metrics
        (docs/observability.md)
  gateway --config FILE [--lock FILE] [--locked] [serve's flags]     (mrtr gateway --help)
        put consent, step-up, approval, rate limits, replay guards and the audit trail in front of other MCP
        servers (stdio commands or HTTP URLs); gateway pin shows and accepts their tool definitions
  users totp <subject> [--totp FILE]
        enrol a person's authenticator app for step-up: prints the otpauth:// URI and a QR code
  audit flows|show|verify|checkpoint|export|keygen [--audit URL]
        read, verify and export the audit trail; export --format ocsf|jsonl [--follow] (mrtr audit --help)
  keys generate [--kid ID]
        print a new requestState key (kid:secret)
  tools <url> [--token T] [--json]          (or: tools --stdio [--env NAME[=VALUE]] -- <command> [args…])
        list a server's tools
  call <url> <tool> [--args JSON] [--answers JSON] [--token T] [--json] [--max-rounds N] [--timeout S]
        call a tool through all its input rounds (mrtr call --help for answers and exit codes);
        call --stdio <tool> [options] -- <command> [args…] launches the server with a minimal environment
  task get <id> <url> [--answers JSON] [--json] [--no-wait] [options]
        follow a task a call left running (printed by mrtr call: "resume with: …") to its end, answering
        its questions as mrtr call does; --no-wait prints its state once (mrtr task --help)
  task cancel <id> <url> [options]             ask the server to cancel a task (tasks/cancel)
  prompt <url> <name> [--args JSON] [options]   get a prompt through its input rounds
  read <url> <uri> [options]                    read a resource through its input rounds
  conformance-client <url>
        the client under test for the official conformance runner (reads MCP_CONFORMANCE_SCENARIO)
  help  show this text
`;

/** Returns the exit code, or undefined for a command that keeps running (a server). */
export async function runCli(argv: string[]): Promise<number | undefined> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command === 'serve' && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(USAGE);
    return 0;
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (load === undefined) {
    process.stderr.write(`mrtr: unknown command '${command}'\n\n${USAGE}`);
    return 2;
  }
  return (await load())(rest);
}
