// `mrtr gateway demo` (`npm run gateway:demo`): the gateway in front of the official filesystem server, on a small
// share made under --data, with a policy like docs/gateway.md's — reads for everyone, writes with consent, moves with
// a second person's approval, nothing under secret/ — and the lines to type to try each rule.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRACKER_CLIENT_ID } from './demo-servers/tracker.js';
import { selfCommand } from './self-command.js';

/** Single-quoted for a POSIX shell: the JSON below has no single quote. */
const q = (json: unknown) => `'${JSON.stringify(json)}'`;

/** The package's own directory (dist/cli/ → ../..): where the demo's dev tokens are. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The filesystem server as installed beside mrtr, else fetched by npx (as its README runs it). */
function filesystemServer(share: string): string[] {
  try {
    const entry = createRequire(import.meta.url).resolve(
      '@modelcontextprotocol/server-filesystem/dist/index.js',
    );
    return [process.execPath, entry, share];
  } catch {
    return ['npx', '-y', '@modelcontextprotocol/server-filesystem', share];
  }
}

export interface GatewayDemo {
  /** The config file written (kept if it exists: edit it and send SIGHUP). */
  config: string;
  tokens: string;
  share: string;
}

/**
 * Make the share and the config under `dataDir` (once), and say where they are. `tracker` is the demo tracker's
 * origin (http://127.0.0.1:PORT): a config written by an earlier run is moved to it, so --port may change.
 */
export function prepareGatewayDemo(dataDir: string, tracker = 'http://127.0.0.1:3101'): GatewayDemo {
  const home = resolve(dataDir, 'gateway-demo');
  const share = join(home, 'share');
  mkdirSync(join(share, 'public'), { recursive: true });
  mkdirSync(join(share, 'secret'), { recursive: true });
  const seed = (path: string, text: string) => {
    if (!existsSync(path)) writeFileSync(path, text);
  };
  seed(join(share, 'public', 'hello.txt'), 'Hello from the share.\n');
  seed(join(share, 'secret', 'key.txt'), 'not for the agent\n');
  const config = join(home, 'gateway.yaml');
  const secret = join(share, 'secret');
  seed(
    config,
    `# The gateway demo's config (mrtr gateway demo). Edit the rules and send SIGHUP to reload them.
upstreams:
  - name: files
    command: ${JSON.stringify(filesystemServer(share))}
    cwd: ${JSON.stringify(share)}
  # A tracker behind its own authorization server: each person connects their own account, once.
  - name: tracker
    url: ${tracker}/mcp
    credentials:
      type: oauth
      issuer: ${tracker}
      clientId: ${TRACKER_CLIENT_ID}
      scopes: [tickets:read, tickets:write]
rules:
  - tools: ["tracker/*"]
    roles: ["*"]
  - tools: ["files/read_*", "files/list_*", "files/search_files", "files/get_file_info"]
    roles: ["*"]
  - tools: ["files/write_file", "files/edit_file", "files/create_directory"]
    roles: [requester]
    require: [consent]
  - tools: ["files/move_file"]
    roles: [requester]
    require: [approval]
    approval: { role: approver, approvals: 1 }
  - tools: ["files/*"]
    # secret/ and everything in it, in every path argument, however spelt (not secret-santa/). The tools that
    # descend into a directory are refused above it too: a search from the share root would list secret/.
    paths: [${JSON.stringify(secret)}]
    descendingTools: ["files/search_files", "files/directory_tree", "files/list_directory_with_sizes"]
    reason: "secret/ is not for agents"
    deny: true
`,
  );
  // The tracker listens on the gateway's port + 1: a config from a run on another port follows it.
  const written = readFileSync(config, 'utf8');
  const moved = written.replace(/http:\/\/127\.0\.0\.1:\d+/g, tracker);
  if (moved !== written) writeFileSync(config, moved);
  return { config, tokens: join(PACKAGE_ROOT, 'examples', 'workflows', 'tokens.json'), share };
}

/** A word for a POSIX shell: as is when it is plain, else single-quoted. */
const word = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`);

/** The demo's own trail: its sink (as given to --audit) and its verifier key, when it has one. */
export interface GatewayDemoAudit {
  audit: string;
  verifierKey: string | undefined;
}

/**
 * What the demo prints once it listens: a line to type per rule, and the audit lines for the demo's own trail (not
 * `npm start`'s ./data/audit.db, which `mrtr audit` reads by default). `mrtr` as this shell reaches it.
 */
export function gatewayDemoHelp(url: string, share: string, trail?: GatewayDemoAudit): string {
  const origin = new URL(url).origin;
  const mrtr = selfCommand().map(word).join(' ');
  const call = (tool: string, token: string, args: unknown) =>
    `  ${mrtr} call ${url} ${tool} --token ${token} --args ${q(args)}`;
  const sink = trail ? `--audit ${word(trail.audit)}` : '';
  return [
    '',
    `Try it (a share at ${share}; tokens: alice-dev-token requester, bob-dev-token approver):`,
    '  # what each person may call',
    `  ${mrtr} tools ${url} --token alice-dev-token`,
    '  # a read, for anyone (a relative path is read from the share)',
    call('files__read_text_file', 'bob-dev-token', { path: 'public/hello.txt' }),
    '  # secret/ is denied, however the path is spelled',
    call('files__read_text_file', 'bob-dev-token', { path: 'public/../secret/key.txt' }),
    '  # a write asks alice to consent to exactly this write (in a terminal)',
    call('files__write_file', 'alice-dev-token', { path: 'public/note.txt', content: 'hi' }),
    '  # a move waits for bob to approve it (in a terminal; bob approves in the inbox)',
    call('files__move_file', 'alice-dev-token', {
      source: 'public/note.txt',
      destination: 'public/moved.txt',
    }),
    "  # the tracker needs each person's own account: alice connects hers once (in a terminal; open the link)",
    call('tracker__connect', 'alice-dev-token', {}),
    '  # then her tracker calls carry her own tracker token',
    call('tracker__list_tickets', 'alice-dev-token', {}),
    `Approvals inbox (sign in with bob-dev-token): ${origin}/mrtr/approvals`,
    `Your connected accounts (sign in first): ${origin}/mrtr/connections`,
    ...(trail
      ? [
          `Every round on this demo's record: ${mrtr} audit flows ${sink}`,
          ...(trail.verifierKey
            ? [`  and check nothing was edited: ${mrtr} audit verify ${sink} --vkey ${trail.verifierKey}`]
            : []),
        ]
      : []),
    '',
  ].join('\n');
}
