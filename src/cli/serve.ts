// `mrtr serve`: run one of the built-in demo servers over Streamable HTTP or stdio.
import { constants } from 'node:os';
import { parseArgs } from 'node:util';
import type { AuditTrail } from '../audit/index.js';
import type { TokenVerifier } from '../auth/index.js';
import type { HumanControls } from '../controls/index.js';
import { MrtrMetrics } from '../metrics/index.js';
import { NOTIFY_DEFAULTS, readNotifyConfig, WebhookNotifier } from '../notify/index.js';
import type { McpServer, McpServerOptions, ServerRoundOptions } from '../server/index.js';
import { Keyring } from '../state/index.js';
import { MemoryStore, RedisAnswerRelay } from '../stores/index.js';
import { auditFromFlag } from './audit-option.js';
import { AUTH_FLAG_OPTIONS, type AuthFlags, authFromFlags } from './auth-option.js';
import { CONSOLE_FLAG_OPTIONS, type ConsoleSetup, consoleFromFlags } from './console-option.js';
import { conformanceServer } from './demo-servers/conformance.js';
import { demoHelp } from './demo-servers/demo-help.js';
import { exampleServer } from './demo-servers/example.js';
import { addControlledTools, type ExampleControlsSetup } from './demo-servers/example-controls.js';
import { METRICS_FLAG_OPTIONS, type MetricsFlags, metricsFromFlags } from './metrics-option.js';
import { explainStartFailure } from './serve-failure.js';
import { keyringFromFile } from './state-keys-file.js';
import { storeFromFlag } from './store-option.js';
import { otlpMetricsWanted, startTracing } from './tracing.js';

/** What a fixture is made with: where a fixture with data keeps it (`--data`), and the human controls' setup. */
interface FixtureContext {
  dataDir: string;
  controls: ExampleControlsSetup;
  /** With --metrics: what the program adds its own metrics to (the gateway's upstreams). */
  metrics?: MrtrMetrics | undefined;
  /** With --audit: the trail, for events that are not rounds (the gateway's tool definition changes). */
  audit?: AuditTrail | undefined;
}
type Fixture = (
  options: Partial<McpServerOptions>,
  context: FixtureContext,
) => McpServer | Promise<McpServer>;

/** examples/workflows/, built on the public API only, compiled by `npm run build` into dist/workflows/ and loaded
 * from there (a path, not an import: the sources are not part of this program). */
interface BuiltWorkflows {
  workflowsServer: (
    options: Partial<McpServerOptions> & { dataDir: string; controls: ExampleControlsSetup },
  ) => McpServer;
  registerWorkflows: (server: McpServer, controls: HumanControls, options: { dataDir: string }) => () => void;
}
const builtWorkflows = () =>
  import(new URL('../workflows/index.js', import.meta.url).href) as Promise<BuiltWorkflows>;

/**
 * What `--fixture` names: the small helpdesk example, what the official conformance suite calls, the workflows of
 * examples/workflows/, and `demo` (what `npm start` serves): the example's tools and the workflows on one server,
 * sharing one set of human controls (the workflows' grant_role, on its database, replaces the example's).
 */
const FIXTURES: Record<string, Fixture> = {
  example: (o, { controls }) => exampleServer(o, controls),
  conformance: (o) => conformanceServer(o),
  workflows: async (o, { dataDir, controls }) =>
    (await builtWorkflows()).workflowsServer({ ...o, dataDir, controls }),
  demo: async (o, { dataDir, controls }) => {
    const { registerWorkflows } = await builtWorkflows();
    const server = exampleServer({
      instructions:
        'The example helpdesk and the workflows: tickets, profiles, document search, VMs and role grants. Tools ask for what is missing; deletions and grants need a person.',
      ...o,
    });
    registerWorkflows(server, addControlledTools(server, controls, { grantRole: false }), { dataDir });
    return server;
  },
};

/** Where `mrtr users totp` writes the TOTP secrets and the server reads them, unless --totp says otherwise. */
export const DEFAULT_TOTP_FILE = 'data/totp.json';

/** The longest delay node's timers take (a larger one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How long a stopping server waits for requests in progress, unless --drain-ms says otherwise. */
const DEFAULT_DRAIN_MS = 10_000;

/** The flags `mrtr serve` and `mrtr gateway` share (parseArgs options). */
export const SERVE_FLAG_OPTIONS = {
  data: { type: 'string', default: './data' },
  host: { type: 'string', default: '127.0.0.1' },
  port: { type: 'string', default: '3000' },
  stdio: { type: 'boolean', default: false },
  'state-keys': { type: 'string' },
  'state-keys-file': { type: 'string' },
  'drain-ms': { type: 'string' },
  'task-ttl-ms': { type: 'string' },
  'max-tasks': { type: 'string' },
  store: { type: 'string' },
  ...AUTH_FLAG_OPTIONS,
  audit: { type: 'string' },
  'audit-instance': { type: 'string' },
  'audit-key-file': { type: 'string' },
  totp: { type: 'string', default: DEFAULT_TOTP_FILE },
  'modern-only': { type: 'boolean', default: false },
  notify: { type: 'string' },
  ...CONSOLE_FLAG_OPTIONS,
  ...METRICS_FLAG_OPTIONS,
} as const;

export async function serveCommand(argv: string[]): Promise<number | undefined> {
  let values: ServeFlags & { fixture?: string };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        fixture: { type: 'string', default: 'example' },
        ...SERVE_FLAG_OPTIONS,
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`mrtr serve: ${(error as Error).message}\n`);
    return 2;
  }
  const fixture = values.fixture ?? 'example';
  // Own entries only: `--fixture constructor` or `__proto__` names no fixture, not an Object member.
  const make = Object.hasOwn(FIXTURES, fixture) ? FIXTURES[fixture] : undefined;
  if (!make) {
    process.stderr.write(
      `mrtr serve: unknown fixture '${values.fixture}' (choose ${Object.keys(FIXTURES).join(', ')})\n`,
    );
    return 2;
  }
  return startServer('serve', values, make, {
    fixture,
    startError: `cannot start fixture '${fixture}'`,
    banner:
      fixture === 'demo' ? (url, verifierKey, totpFile) => demoHelp(url, totpFile, verifierKey) : undefined,
  });
}

/** What a served program adds to `mrtr serve`'s start-up: its name in messages, and the help it prints once up. */
export interface StartHooks {
  /** The fixture name start failures are explained for (explainStartFailure). */
  fixture: string;
  /** What a failure to build the server was doing (`cannot start fixture 'demo'`). */
  startError: string;
  /** Printed once listening (the demo's try-it lines). */
  banner?: (url: string, verifierKey: string | undefined, totpFile: string) => string;
  /** Run on SIGHUP (the gateway reloads its policy). */
  onHangUp?: () => void;
  /** Wraps the token verifier the auth flags make (see authFromFlags). */
  wrapVerifier?: (verifier: TokenVerifier) => TokenVerifier;
  /** Run once the listener closed, before the stores do. */
  onClose?: () => Promise<void>;
  /** The program's own console panels and controls (the gateway's), once its server exists. */
  console?: (console: ConsoleSetup) => void;
}

/** The flags every served program shares (listener, keys, stores, auth, audit, TOTP). */
export type ServeFlags = AuthFlags &
  MetricsFlags & {
    'console-role'?: string[];
    notify?: string;
    data?: string;
    host?: string;
    port?: string;
    stdio?: boolean;
    'state-keys'?: string;
    'state-keys-file'?: string;
    'drain-ms'?: string;
    'task-ttl-ms'?: string;
    'max-tasks'?: string;
    store?: string;
    audit?: string;
    'audit-instance'?: string;
    'audit-key-file'?: string;
    totp?: string;
    'modern-only'?: boolean;
  };

/** --task-ttl-ms and --max-tasks as McpServer's `tasks` options, undefined when neither is given, or what is wrong. */
function taskFlags(values: ServeFlags): { ttlMs?: number; maxPerPrincipal?: number } | undefined | string {
  const ttl = values['task-ttl-ms'];
  const max = values['max-tasks'];
  if (ttl === undefined && max === undefined) return undefined;
  const tasks: { ttlMs?: number; maxPerPrincipal?: number } = {};
  if (ttl !== undefined) {
    // McpServer's own bound on tasks.ttlMs; a task kept 0 ms would be gone before its first tasks/get.
    if (!/^\d+$/.test(ttl) || Number(ttl) < 1 || Number(ttl) > 0xffff_ffff)
      return `--task-ttl-ms must be an integer from 1 to ${0xffff_ffff} (ms), got '${ttl}'`;
    tasks.ttlMs = Number(ttl);
  }
  if (max !== undefined) {
    if (!/^\d+$/.test(max) || Number(max) < 1 || Number(max) > 10_000)
      return `--max-tasks must be an integer from 1 to 10000, got '${max}'`;
    tasks.maxPerPrincipal = Number(max);
  }
  return tasks;
}

/** Open the stores, auth and audit the flags name, build the server with `make`, and serve it until a signal. */
export async function startServer(
  command: string,
  values: ServeFlags,
  make: Fixture,
  hooks: StartHooks,
): Promise<number | undefined> {
  const { fixture } = hooks;
  // The flag readers speak as `mrtr serve`; under another command they speak as that one.
  const say = (line: string) => process.stderr.write(`${line.replace(/^mrtr serve:/, `mrtr ${command}:`)}\n`);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(
      `mrtr ${command}: --port must be an integer from 0 to 65535, got '${values.port}'\n`,
    );
    return 2;
  }
  const drain = values['drain-ms'];
  const drainMs = drain === undefined ? DEFAULT_DRAIN_MS : /^\d+$/.test(drain) ? Number(drain) : Number.NaN;
  if (!(drainMs <= MAX_TIMER_MS)) {
    process.stderr.write(
      `mrtr ${command}: --drain-ms must be an integer from 0 to ${MAX_TIMER_MS}, got '${drain}'\n`,
    );
    return 2;
  }
  const served = await metricsFromFlags(values);
  if ('error' in served) {
    process.stderr.write(`mrtr ${command}: ${served.error}\n`);
    return 2;
  }
  // Measured for --metrics, for OTLP metrics (OTEL_METRICS_EXPORTER=otlp or an OTLP endpoint), or both: one registry.
  const metrics = served.served?.metrics ?? (otlpMetricsWanted() ? new MrtrMetrics() : undefined);
  const rounds: ServerRoundOptions = {};
  const options: Partial<McpServerOptions> = { rounds };
  // The tasks extension's two limits an operator tunes: how long a task is kept, how many one person may have open.
  const tasks = taskFlags(values);
  if (typeof tasks === 'string') {
    process.stderr.write(`mrtr ${command}: ${tasks}\n`);
    return 2;
  }
  if (tasks) options.tasks = tasks;
  const keysFile = values['state-keys-file'];
  if (keysFile !== undefined && values['state-keys'] !== undefined) {
    process.stderr.write(`mrtr ${command}: give --state-keys or --state-keys-file, not both\n`);
    return 2;
  }
  // A flag, then the environment (a fleet's shared keys), then the file (one machine).
  const spec = values['state-keys'] ?? process.env.MRTR_STATE_KEYS;
  if (spec === undefined && keysFile !== undefined) {
    const fromFile = keyringFromFile(keysFile, say);
    if ('error' in fromFile) {
      process.stderr.write(`mrtr ${command}: ${fromFile.error}\n`);
      return 2;
    }
    options.state = { keys: fromFile.keyring };
  } else if (spec !== undefined) {
    try {
      options.state = { keys: Keyring.fromSpec(spec) };
    } catch (error) {
      process.stderr.write(`mrtr ${command}: invalid state keys: ${(error as Error).message}\n`);
      return 2;
    }
  }
  const opened = await storeFromFlag(values.store, say);
  if ('error' in opened) {
    process.stderr.write(`mrtr ${command}: ${opened.error}\n`);
    return 2;
  }
  if (opened.store) rounds.replay = { store: opened.store };
  // 2025 clients are served unless --modern-only; on a Redis store their answers reach the waiting instance by
  // pub/sub on the same Redis, so a fleet needs no sticky sessions.
  let relay: RedisAnswerRelay | undefined;
  if (values['modern-only']) options.legacyClients = false;
  else if (values.store?.startsWith('redis://') || values.store?.startsWith('rediss://')) {
    try {
      relay = await RedisAnswerRelay.connect(values.store, () => {});
    } catch (error) {
      process.stderr.write(
        `mrtr ${command}: cannot reach ${opened.store?.description} for 2025 clients' answers: ${(error as Error).message}\n`,
      );
      await opened.store?.close();
      return 2;
    }
    options.legacyClients = { relay };
  }
  const host = values.host ?? '127.0.0.1';
  const shownHost = host.includes(':') ? `[${host}]` : host;
  if (
    port === 0 &&
    values.resource === undefined &&
    values.audience === undefined &&
    (values.tokens ?? values.issuer)
  ) {
    process.stderr.write(
      `mrtr ${command}: with --port 0 the URL is not known in advance: give --resource URL too\n`,
    );
    await opened.store?.close();
    return 2;
  }
  const authed = authFromFlags(values, host, `http://${shownHost}:${port}/mcp`, say, hooks.wrapVerifier);
  if ('error' in authed) {
    process.stderr.write(`mrtr ${command}: ${authed.error}\n`);
    await opened.store?.close();
    return 2;
  }
  if (authed.auth) {
    if (values.stdio) {
      process.stderr.write(
        `mrtr ${command}: --tokens and --issuer are for HTTP; a stdio server trusts its parent process\n`,
      );
      await opened.store?.close();
      return 2;
    }
    options.auth = authed.auth;
    if (authed.signIn) options.signIn = authed.signIn;
  }
  const audited = await auditFromFlag(
    values.audit,
    { instance: values['audit-instance'], keyFile: values['audit-key-file'], stdio: values.stdio ?? false },
    say,
  );
  if ('error' in audited) {
    await opened.store?.close();
    process.stderr.write(`mrtr ${command}: ${audited.error}\n`);
    return 2;
  }
  if (audited.trail) {
    const trail = audited.trail;
    rounds.observers = [metrics ? metrics.timedAudit(trail) : trail];
    metrics?.auditBacklog(() => trail.backlog);
  }
  // The console, when people can sign in: a round observer too when it shows flows (that view refreshes as rounds are
  // recorded).
  let operatorConsole: ConsoleSetup | undefined;
  if (options.signIn && !values.stdio) {
    const made = await consoleFromFlags(values, audited.trail, say);
    if ('error' in made) {
      await audited.trail?.close();
      await opened.store?.close();
      process.stderr.write(`mrtr ${command}: ${made.error}\n`);
      return 2;
    }
    operatorConsole = made;
    if (made.showsFlows) rounds.observers = [...(rounds.observers ?? []), made.console.observer];
  }
  if (metrics) rounds.observers = [...(rounds.observers ?? []), metrics.observer];
  // Webhooks that tell approvers of a request waiting for them: beside the rounds, never in their way.
  let notifier: WebhookNotifier | undefined;
  if (values.notify !== undefined) {
    try {
      const targets = readNotifyConfig(values.notify);
      notifier = new WebhookNotifier({ targets, log: (line) => say(`mrtr serve: ${line}`) });
      say(
        `mrtr serve: approval requests are sent to ${targets.length} webhook(s): ${targets.map((t) => `${t.name} (${t.url.host})`).join(', ')}`,
      );
    } catch (error) {
      await operatorConsole?.close();
      await audited.trail?.close();
      await opened.store?.close();
      process.stderr.write(`mrtr ${command}: --notify: ${(error as Error).message}\n`);
      return 2;
    }
  }
  // Approvals and step-ups live in the --store (shared by every instance), else in this process's memory.
  const controlsStore = opened.store ?? new MemoryStore();
  const totpFile = values.totp ?? DEFAULT_TOTP_FILE;
  // Before the server is built: its rounds find the SDK registered (OTEL_EXPORTER_OTLP_ENDPOINT and the rest).
  const tracing = await startTracing(command === 'gateway' ? 'mrtr-gateway' : 'mrtr', metrics?.registry);
  let server: McpServer;
  try {
    server = await make(options, {
      dataDir: values.data ?? './data',
      controls: {
        store: controlsStore,
        totpFile,
        onEvent: (event) => {
          process.stderr.write(`mrtr ${command}: ${event.control} ${JSON.stringify(event)}\n`);
          notifier?.notify(event);
        },
        ...(operatorConsole || metrics
          ? {
              onControls: (controls: HumanControls) => {
                operatorConsole?.withControls(controls);
                metrics?.approvalsPending(async () => (await controls.approvals.pending()).length);
              },
            }
          : {}),
      },
      metrics,
      audit: audited.trail,
    });
    if (operatorConsole) {
      hooks.console?.(operatorConsole);
      operatorConsole.console.attach(server);
    }
  } catch (error) {
    await operatorConsole?.close();
    await audited.trail?.close();
    await opened.store?.close();
    await tracing?.shutdown();
    return startFailed(error, hooks.startError, fixture, command);
  }
  if (options.signIn && !values.stdio) {
    const origin = new URL(options.auth?.resource ?? `http://${shownHost}:${port}`).origin;
    process.stderr.write(
      `mrtr ${command}: console at ${origin}/mrtr/console; approvals inbox at ${origin}/mrtr/approvals; step-up codes checked against ${totpFile} (enrol: mrtr users totp SUBJECT --totp ${totpFile})\n`,
    );
  }
  if (values.stdio) {
    await server.stdio();
    await tracing?.shutdown();
    return 0;
  }
  try {
    const endpoint = await server.listen({ host: values.host, port });
    // First signal: stop accepting and let requests in progress finish (a rolling deploy); a second one: now.
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        process.stderr.write(`mrtr ${command}: ${signal} again, closing now\n`);
        // Each webhook delivery not done yet is named before the process ends.
        notifier?.stop();
        // The shell's convention for "ended by signal N": 130 for SIGINT, 143 for SIGTERM.
        process.exit(128 + constants.signals[signal]);
      }
      stopping = true;
      process.stderr.write(
        `mrtr ${command}: ${signal}: finishing requests in progress (up to ${drainMs / 1000} s; again to stop now)\n`,
      );
      // Live console streams never end on their own: end them first, or the drain would wait its whole time.
      operatorConsole?.console.close();
      endpoint
        .close({ graceMs: drainMs })
        // The trail seals a last checkpoint once the last round is answered.
        .then(() => hooks.onClose?.())
        .then(() => closeNotifier(notifier, Math.min(drainMs, NOTIFY_DEFAULTS.closeMs), say))
        .then(() => operatorConsole?.close())
        // The spans of the last rounds, and the metrics, are sent before the stores they read close.
        .then(() => tracing?.shutdown())
        .then(() => audited.trail?.close())
        .then(() => relay?.close())
        .then(() => opened.store?.close())
        .then(() => process.exit(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    // Ready only once a signal would be handled: whoever waits for this line may stop us right after it. With
    // --audit jsonl:- stdout is the trail, which `mrtr audit verify --audit jsonl:-` reads line by line as JSON, so
    // what is for a person goes to stderr there.
    const out = values.audit === 'jsonl:-' ? process.stderr : process.stdout;
    if (served.served) say(`mrtr serve: metrics at ${served.served.url}`);
    out.write(`listening on ${endpoint.url}\n`);
    if (hooks.banner) out.write(hooks.banner(endpoint.url, audited.trail?.verifierKey, totpFile));
    if (hooks.onHangUp) process.on('SIGHUP', hooks.onHangUp);
  } catch (error) {
    await audited.trail?.close();
    await opened.store?.close();
    await tracing?.shutdown();
    return startFailed(error, `cannot listen on ${values.host}:${port}`, fixture, command);
  }
  return undefined;
}

/** Let webhook deliveries still under way finish, within `withinMs`; the notifier names each one it gives up. */
async function closeNotifier(
  notifier: WebhookNotifier | undefined,
  withinMs: number,
  say: (line: string) => void,
): Promise<void> {
  if (!notifier) return;
  if (notifier.pending > 0)
    say(
      `mrtr serve: ${notifier.pending} webhook delivery(ies) not done yet: trying for up to ${withinMs / 1000} s`,
    );
  await notifier.close(withinMs);
}

function startFailed(error: unknown, doing: string, fixture: string, command: string): number {
  const { message, exitCode } = explainStartFailure(error, doing, fixture, command);
  process.stderr.write(`${message}\n`);
  return exitCode;
}
