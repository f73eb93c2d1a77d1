// `mrtr gateway`: serve the gateway in front of the upstreams a config file names, with `mrtr serve`'s flags for
// the listener, auth, stores and audit; `mrtr gateway pin` shows and accepts upstream tool definitions;
// `mrtr gateway check` reads a config and its policy without starting anything.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type ConnectionConfig, type ConnectionEvent, connectRedirectUri } from '../connections/index.js';
import { ConnectionsPanel } from '../console/index.js';
import { totpSecretsFile } from '../controls/index.js';
import {
  connectionConfigs,
  type DefinitionChange,
  Gateway,
  type GatewayConfig,
  GatewayConfigError,
  GatewayPanel,
  loadGatewayConfig,
  needsConnections,
  PinBook,
  type RememberingVerifier,
  rememberingVerifier,
  type UpstreamRoundEvent,
  unknownArgumentWarnings,
} from '../gateway/index.js';
import { DURATION_HINT, parseDuration } from '../gateway/internal.js';
import { Keyring } from '../state/index.js';
import { startTracker } from './demo-servers/tracker.js';
import { type GatewayConnections, gatewayConnections, redirectUriRefusal } from './gateway-connections.js';
import { gatewayDemoHelp, prepareGatewayDemo } from './gateway-demo.js';
import { defaultLockFile } from './gateway-lock-file.js';
import { pinCommand } from './gateway-pin.js';
import { SERVE_FLAG_OPTIONS, type ServeFlags, startServer } from './serve.js';

export const GATEWAY_USAGE = `usage: mrtr gateway --config FILE [--lock FILE] [--locked] [--call-timeout D] [--host H] [--port P] [serve's flags]
       mrtr gateway pin --config FILE [--lock FILE] [--diff] [--accept UPSTREAM/TOOL]… [--all] [--check]
       mrtr gateway check --config FILE [--lock FILE]
       mrtr gateway demo [--port P] [--data DIR]   (npm run gateway:demo)

  serve the gateway: every upstream's tools under <upstream>__<tool>, listed and callable only as the config's
  rules allow, with consent, step-up, approval and rate limits before a call reaches its upstream. The flags of
  mrtr serve apply: --tokens FILE | --issuer URL --audience AUD, --store, --audit, --audit-key-file,
  --state-keys-file, --totp, --metrics PORT [--metrics-host H]. SIGHUP reloads the config's rules (calls in progress keep going).
  --lock FILE   the pinned tool definitions (default: FILE.lock.json beside the config); a tool whose definition
                changed since it was pinned is withheld until accepted with mrtr gateway pin --accept;
                with --store redis://…, pins and accepts are shared by every instance on that Redis
  --locked      withhold tools the lock file does not list (default: pin them at first sight)
  --call-timeout DURATION   the longest one round may wait for its upstream (default 2m); in a fleet, a round
                whose instance died is taken over by the caller's retry this long plus 10 s later

  pin shows each tool's status against the lock file and pins what --accept or --all names; pin --check
  writes nothing and exits 1 when a tool is new or changed (for CI). check reads the config and warns of a
  condition that reads an argument a pinned tool does not have.
`;

const PAGES_NEED_SIGN_IN =
  "the rules require step_up or approval, which send people to the gateway's pages: give --tokens FILE, or --issuer URL --audience AUD with --client-id ID (people sign in there with OpenID)";

const CONNECT_NEEDS_SIGN_IN = (names: string) =>
  `upstream ${names} needs each person's own account (credentials type oauth): people connect it on the gateway's pages, signed in: give --tokens FILE (development), or --issuer URL --audience AUD with --client-id ID`;

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

export async function gatewayCommand(
  argv: string[],
  /** What to print once listening (the demo's try-it lines); default a one-line summary. */
  help?: (url: string, verifierKey: string | undefined) => string,
): Promise<number | undefined> {
  const [sub, ...rest] = argv;
  // The usage covers every subcommand: `mrtr gateway demo --help` shows it rather than "Unknown option".
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(GATEWAY_USAGE);
    return 0;
  }
  if (sub === 'pin') return pinCommand(rest);
  if (sub === 'check') return checkCommand(rest);
  if (sub === 'demo') return demoCommand(rest);
  let values: ServeFlags & {
    config?: string;
    lock?: string;
    locked?: boolean;
    'call-timeout'?: string;
  };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        lock: { type: 'string' },
        locked: { type: 'boolean', default: false },
        'call-timeout': { type: 'string' },
        ...SERVE_FLAG_OPTIONS,
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`mrtr gateway: ${(error as Error).message}\n${GATEWAY_USAGE}`);
    return 2;
  }
  if (values.config === undefined) {
    process.stderr.write(`mrtr gateway: --config FILE is required\n${GATEWAY_USAGE}`);
    return 2;
  }
  if (values.stdio) {
    process.stderr.write(
      'mrtr gateway: the gateway serves over HTTP only (its controls send people to its pages)\n',
    );
    return 2;
  }
  const callTimeout = values['call-timeout'];
  const callTimeoutMs = callTimeout === undefined ? undefined : parseDuration(callTimeout);
  if (callTimeout !== undefined && callTimeoutMs === undefined) {
    process.stderr.write(`mrtr gateway: --call-timeout ${callTimeout} is not a duration: ${DURATION_HINT}\n`);
    return 2;
  }
  const configFile = values.config;
  let config: GatewayConfig;
  let pins: PinBook;
  try {
    config = loadGatewayConfig(configFile);
    pins = PinBook.load(values.lock ?? defaultLockFile(configFile));
  } catch (error) {
    process.stderr.write(`mrtr gateway: ${(error as Error).message}\n`);
    return 2;
  }
  const needsPages = config.policy.controlsUsed().some((c) => c === 'step_up' || c === 'approval');
  // Refused before anything is opened or started, as the config's other mistakes are (exit 2, not a start failure).
  // With --issuer the pages sign people in with OpenID, which takes the gateway's client there (--client-id).
  const signIn =
    values.tokens !== undefined || (values.issuer !== undefined && values['client-id'] !== undefined);
  if (needsPages && !signIn) {
    process.stderr.write(`mrtr gateway: ${PAGES_NEED_SIGN_IN}\n`);
    return 2;
  }
  // A person connects an upstream's account on the gateway's own page, which must know who they are.
  let connectionsDeclared: ConnectionConfig[] = [];
  if (needsConnections(config)) {
    const names = config.upstreams
      .filter((u) => u.credentials.type === 'oauth')
      .map((u) => u.name)
      .join(', ');
    if (!signIn) {
      process.stderr.write(`mrtr gateway: ${CONNECT_NEEDS_SIGN_IN(names)}\n`);
      return 2;
    }
    try {
      // The client secrets are read now: a variable not set stops the start, not a person's first connect.
      connectionsDeclared = connectionConfigs(config);
    } catch (error) {
      process.stderr.write(`mrtr gateway: ${(error as Error).message}\n`);
      return 2;
    }
  }
  // Every rule is about who calls: without auth every caller is anonymous, and no rule allows anonymous calls.
  if (values.tokens === undefined && values.issuer === undefined) {
    process.stderr.write(
      'mrtr gateway: the gateway needs to know who calls: give --tokens FILE (development) or --issuer URL --audience AUD\n',
    );
    return 2;
  }
  const say = (line: string) => process.stderr.write(`mrtr gateway: ${line}\n`);
  // The docs promise an event for every round: say plainly when this gateway keeps none.
  if (values.audit === undefined)
    say(
      'no --audit: the rounds through this gateway are not recorded (give --audit sqlite:PATH to keep a trail)',
    );
  let gateway: Gateway | undefined;
  // Each request's verified token, for upstreams whose credentials are exchanged per caller (RFC 8693).
  const remembering: { current?: RememberingVerifier } = {};
  // The people's connections, once built: the console shows each person their own.
  let connections: GatewayConnections | undefined;
  return startServer(
    'gateway',
    values,
    (options, { controls, metrics, audit }) => {
      if (needsPages && !options.signIn) throw new GatewayConfigError(PAGES_NEED_SIGN_IN);
      if (connectionsDeclared.length > 0) {
        connections = gatewayConnections({
          store: controls.store,
          keyring:
            typeof options.state?.keys === 'string'
              ? Keyring.fromSpec(options.state.keys)
              : options.state?.keys,
          connections: connectionsDeclared,
          // The trail keeps what happened to each connection (a hold while a person connects is no such fact).
          ...(audit
            ? {
                onEvent: (event: ConnectionEvent) => {
                  if (event.action === 'waiting') return;
                  audit
                    .connectionEvent(event)
                    .catch((error: unknown) =>
                      say(`the audit trail did not record a connection event: ${(error as Error).message}`),
                    );
                },
              }
            : {}),
        });
        const origin = new URL(
          options.auth?.resource ?? `http://${values.host ?? '127.0.0.1'}:${values.port}`,
        ).origin;
        // One redirect URI per upstream: an authorization server that forwards another's answer is caught by it.
        for (const connection of connectionsDeclared) {
          const redirectUri = connectRedirectUri(origin, connection.name);
          // An http origin before an https upstream: every connect would fail at its page, so the start does.
          const refusal = redirectUriRefusal(connection, redirectUri);
          if (refusal) throw new GatewayConfigError(refusal);
          say(
            `upstream ${connection.name}: people connect their own accounts; register the redirect URI ${redirectUri} at its authorization server`,
          );
        }
        if (options.state?.keys === undefined)
          say(
            'no --state-keys: connected accounts are sealed with a key this process makes, so people connect again after a restart and on every other instance',
          );
      }
      gateway = new Gateway({
        config,
        // The round's limit is the upstream's: the replay guard's lease follows it (plus 10 s).
        server:
          callTimeoutMs === undefined
            ? options
            : { ...options, rounds: { ...options.rounds, handlerTimeoutMs: callTimeoutMs } },
        ...(callTimeoutMs === undefined ? {} : { upstreamTimeoutMs: callTimeoutMs }),
        store: controls.store,
        controls: { totp: totpSecretsFile(controls.totpFile), onEvent: controls.onEvent },
        pins,
        locked: values.locked ?? false,
        log: say,
        tokenOf: (principal) => remembering.current?.tokenOf(principal),
        ...(connections ? { connections } : {}),
        observers: [
          ...(metrics ? [{ upstreamRound: (e: UpstreamRoundEvent) => metrics.upstreamRound(e) }] : []),
          // A definition change is an event of the trail, beside the rounds: what a SIEM rule matches.
          ...(audit ? [{ definitionChanged: (c: DefinitionChange) => audit.definitionChanged(c) }] : []),
        ],
      });
      connections?.attach(gateway.server);
      const made = gateway;
      if (metrics) {
        metrics.approvalsPending(async () => (await made.controls.approvals.pending()).length);
        metrics.upstreams(() => {
          const withheld = new Map(made.catalog.health().map((h) => [h.upstream, h.withheld]));
          return made.upstreams.map((u) => ({
            upstream: u.name,
            open: u.openClients,
            withheld: withheld.get(u.name) ?? 0,
          }));
        });
      }
      // The upstreams start with the gateway: say when each has answered, so an operator knows the tools are there.
      const started = gateway;
      void started.started.then(() => {
        const up = started.catalog
          .health()
          .map((h) => `${h.upstream} (${h.failure ? 'failed' : `${h.tools} tools`})`);
        say(`upstreams started: ${up.join(', ')}`);
      });
      return gateway.server;
    },
    {
      fixture: 'gateway',
      startError: `cannot start the gateway for ${configFile}`,
      banner: (url, verifierKey) =>
        // The pid, for the reload docs/gateway.md documents: `kill -HUP <pid>`.
        `pid ${process.pid}: kill -HUP ${process.pid} reloads the rules and the lock file\n${
          help?.(url, verifierKey) ??
          `gateway in front of ${config.upstreams.map((u) => u.name).join(', ')}; policy ${config.policy.digest.slice(0, 12)}; try: mrtr tools ${url} --token TOKEN\n`
        }`,
      onHangUp: () => {
        try {
          const next = loadGatewayConfig(configFile);
          const lock = values.lock ?? defaultLockFile(configFile);
          for (const line of gateway?.reload(next, PinBook.load(lock)) ?? []) say(line);
          say(`SIGHUP: policy reloaded from ${configFile} (version ${next.policy.digest.slice(0, 12)})`);
          void gateway?.withdrawal.then((n) => {
            if (n > 0) say(`SIGHUP: ${n} approval request(s) asked under the old policy withdrawn`);
          });
        } catch (error) {
          say(`SIGHUP: the policy in force is kept: ${(error as Error).message}`);
        }
      },
      wrapVerifier: (verifier) => {
        remembering.current = rememberingVerifier(verifier);
        return remembering.current.verifier;
      },
      onClose: () => gateway?.close() ?? Promise.resolve(),
      // The gateway's own controls: their approvals show in the console beside any other.
      console: (setup) => {
        if (!gateway) return;
        setup.withControls(gateway.controls);
        setup.add([
          new GatewayPanel(gateway, { log: say }),
          ...(connections ? [new ConnectionsPanel(connections)] : []),
        ]);
      },
    },
  );
}

/**
 * The gateway in front of the official filesystem server, on a share under --data (default ./data), with dev tokens,
 * a SQLite replay store and audit trail: what `npm run gateway:demo` runs.
 */
async function demoCommand(argv: string[]): Promise<number | undefined> {
  let values: { port?: string; data?: string };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { port: { type: 'string', default: '3100' }, data: { type: 'string', default: './data' } },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`mrtr gateway demo: ${(error as Error).message}\n`);
    return 2;
  }
  const data = values.data ?? './data';
  const port = Number(values.port);
  if (!(Number.isInteger(port) && port >= 1 && port <= 65534)) {
    process.stderr.write(
      `mrtr gateway demo: --port must be a whole number from 1 to 65534, got ${values.port}\n`,
    );
    return 2;
  }
  // The tracker, an upstream behind its own authorization server, listens next door; its one redirect URI is the
  // gateway's connect callback for the tracker.
  let tracker: Awaited<ReturnType<typeof startTracker>>;
  try {
    tracker = await startTracker(port + 1, connectRedirectUri(`http://127.0.0.1:${port}`, 'tracker'));
  } catch (error) {
    process.stderr.write(
      `mrtr gateway demo: the demo tracker cannot listen on 127.0.0.1:${port + 1} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); choose another --port\n`,
    );
    return 1;
  }
  const demo = prepareGatewayDemo(data, tracker.issuer);
  const audit = `sqlite:${join(data, 'gateway-demo', 'audit.db')}`;
  const code = await gatewayCommand(
    [
      '--config',
      demo.config,
      '--port',
      values.port ?? '3100',
      '--tokens',
      demo.tokens,
      '--store',
      `sqlite:${join(data, 'gateway-demo', 'replay.db')}`,
      '--audit',
      audit,
      '--audit-key-file',
      join(data, 'gateway-demo', 'audit-key'),
      '--state-keys-file',
      join(data, 'gateway-demo', 'state-keys'),
      '--totp',
      join(data, 'gateway-demo', 'totp.json'),
    ],
    (url, verifierKey) => gatewayDemoHelp(url, demo.share, { audit, verifierKey }),
  );
  // undefined: the gateway is serving (the tracker serves beside it until the process ends); a number: it stopped.
  if (code !== undefined) await tracker.endpoint.close();
  return code;
}

async function checkCommand(argv: string[]): Promise<number> {
  let values: { config?: string; lock?: string };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { config: { type: 'string' }, lock: { type: 'string' } },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`mrtr gateway check: ${(error as Error).message}\n`);
    return 2;
  }
  if (values.config === undefined) {
    process.stderr.write('mrtr gateway check: --config FILE is required\n');
    return 2;
  }
  try {
    const config = loadGatewayConfig(values.config);
    const lock = values.lock ?? defaultLockFile(values.config);
    // The pinned definitions are the tools the gateway serves: their schemas say which arguments exist.
    const pinned = PinBook.load(lock)
      .pins()
      .map(({ upstream, tool, pin }) => ({ upstream, tool, definition: pin.definition }));
    process.stdout.write(
      `${values.config}: ${count(config.upstreams.length, 'upstream')}, ${count(config.policy.ruleCount, 'rule')}, policy version ${config.policy.digest}\n`,
    );
    if (pinned.length === 0)
      process.stderr.write(
        `mrtr gateway check: no tools pinned in ${lock}, so the arguments conditions read are not checked (mrtr gateway pin --config ${values.config} --all pins them)\n`,
      );
    for (const warning of unknownArgumentWarnings(config.rules, pinned))
      process.stderr.write(`mrtr gateway check: warning: ${warning}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`mrtr gateway check: ${(error as Error).message}\n`);
    return 2;
  }
}
