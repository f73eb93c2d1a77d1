// McpServer's option groups — the sealed state, the rounds, the tasks — and the flat names of the release before,
// read into one checked shape. A flat name beside its grouped spelling is refused: which one wins would be a guess.
import type { ReplayGuardOptions } from '../guard/index.js';
import type { Keyring } from '../state/index.js';
import type { SharedStore } from '../stores/index.js';
import { InvalidOptionError } from './errors.js';
import { checkIntegerOption, MAX_TIMER_MS } from './option-checks.js';
import type { RequestStateCodec } from './request-state.js';
import type { RoundGuard } from './round/guard.js';
import type { RoundLink } from './round/link.js';
import type { RoundObserver } from './round/observer.js';

/** How requestState is sealed and bounded (docs/state.md). */
export interface ServerStateOptions {
  /**
   * Keys that seal requestState: a Keyring, or a spec `kid:secret,kid:secret` (first = current; see
   * `mrtr keys generate`). Defaults to `MRTR_STATE_KEYS`; with neither, a per-process key and a loud warning,
   * since a fleet needs every instance to share the keyring.
   */
  keys?: Keyring | string;
  /** This server's id: state sealed here never opens on a server with another audience (default: `name`). */
  audience?: string;
  /** Largest accepted requestState in bytes, checked before decoding (default 8 KiB). */
  maxBytes?: number;
  /**
   * Deflate requestState payloads when that makes them smaller (default false). Off because a flow's sealed journal
   * mixes client-chosen answers with handler data: with compression, a client replaying states could learn that data
   * from the token length (a CRIME-style oracle). Turn on only when no sealed data is secret.
   */
  compression?: boolean;
  /** Replace the requestState codec entirely (the other state options are then ignored). */
  codec?: RequestStateCodec;
}

/** What every tools/call, prompts/get and resources/read round passes through, and how long it may take. */
export interface ServerRoundOptions {
  /** Most input_required rounds one request may take (default 10). */
  maxRounds?: number;
  /**
   * How long one round of any handler may run unless it sets its own `timeoutMs` (default 2 minutes, above common
   * client timeouts). On expiry the request is answered (tools: an isError result; others: -32603) and the
   * handler's ctx.signal aborts; a handler doing I/O should pass that signal on.
   */
  handlerTimeoutMs?: number;
  /**
   * How long the server waits for a guard's store or an observer's sink before it fails the round closed (default
   * 10 s): a replay store or an audit sink that hangs answers -32603 instead of holding requests open.
   */
  hookTimeoutMs?: number;
  /**
   * Checks every round passes, in order: after its requestState opened and before the handler runs (`admit`), and
   * once its answer is ready but not yet sent (`commit`).
   */
  guards?: readonly RoundGuard[];
  /** Told the outcome of every such request, refused ones included; the answer waits for their promises. */
  observers?: readonly RoundObserver[];
  /**
   * Links every round runs in its flow, in order, once its state opened and its guards admitted it, before the
   * handler: each may ask with `round.ctx.ask`, answer in the handler's place, refuse, or pass with `next()`.
   */
  links?: readonly RoundLink[];
  /**
   * Make every round's requestState single-use (docs/replay.md): an identical retry gets the identical answer,
   * anything else replayed is refused, ask.step results are kept, and refused presentations are counted per
   * principal. Without it, a replayed state is not refused.
   */
  replay?: ReplayOptions;
}

/** The replay guard's store and tuning. */
export interface ReplayOptions extends ReplayGuardOptions {
  /** A shared store (memory, SQLite, Redis: `mrtr/stores`); tasks and 2025 sessions are kept there too by default. */
  store: SharedStore;
}

/** Where tasks are kept and how long. */
export interface TaskOptions {
  /** Where task records live (default: `rounds.replay.store`, else this process's memory — a fleet needs a shared one). */
  store?: SharedStore;
  /** How long a task is kept from its creation unless its tool says otherwise (default 24 h). */
  ttlMs?: number;
  /** The polling interval suggested to clients (default 1 s). */
  pollIntervalMs?: number;
  /**
   * How long a task round's claim holds without renewal (default 30 s): the instance running it renews it while the
   * round runs, so only an instance that died lets another run the round again.
   */
  leaseMs?: number;
  /**
   * Unfinished tasks one person (issuer and subject, through any client) may have (default 100, at most 10 000): past
   * it, a call that would become a task gets 429 with Retry-After, and a call that waits for a person is answered as
   * a plain round instead. Callers without authentication share one count.
   */
  maxPerPrincipal?: number;
}

/** The names of the release before; each still works for this release, and none may be given with its new one. */
export interface FlatServerOptions {
  /** @deprecated Give `state: { keys }`. */
  stateKeys?: Keyring | string;
  /** @deprecated Give `state: { audience }`. */
  audience?: string;
  /** @deprecated Give `state: { maxBytes }`. */
  maxStateBytes?: number;
  /** @deprecated Give `state: { compression }`. */
  stateCompression?: boolean;
  /** @deprecated Give `state: { codec }`. */
  stateCodec?: RequestStateCodec;
  /** @deprecated Give `rounds: { maxRounds }`. */
  maxRounds?: number;
  /** @deprecated Give `rounds: { handlerTimeoutMs }`. */
  handlerTimeoutMs?: number;
  /** @deprecated Give `rounds: { hookTimeoutMs }`. */
  hookTimeoutMs?: number;
  /** @deprecated Give `rounds: { guards }`. */
  guards?: readonly RoundGuard[];
  /** @deprecated Give `rounds: { observers }`. */
  observers?: readonly RoundObserver[];
  /** @deprecated Give `rounds: { replay: { store } }`. */
  replayStore?: SharedStore;
  /** @deprecated Give `rounds: { replay: { store, ...tuning } }`. */
  replay?: ReplayGuardOptions;
}

/** Each flat name and where it lives now (`replayStore` and `replay` both become `rounds.replay`). */
export const FLAT_OPTIONS = {
  stateKeys: 'state.keys',
  audience: 'state.audience',
  maxStateBytes: 'state.maxBytes',
  stateCompression: 'state.compression',
  stateCodec: 'state.codec',
  maxRounds: 'rounds.maxRounds',
  handlerTimeoutMs: 'rounds.handlerTimeoutMs',
  hookTimeoutMs: 'rounds.hookTimeoutMs',
  guards: 'rounds.guards',
  observers: 'rounds.observers',
  replayStore: 'rounds.replay.store',
  replay: 'rounds.replay',
} as const satisfies Record<keyof FlatServerOptions, string>;

type FlatName = keyof typeof FLAT_OPTIONS;

/** The rounds group as read: a flat `replay` without `replayStore` leaves the store out (refused when the core is built). */
export type ReadRoundOptions = Omit<ServerRoundOptions, 'replay'> & { replay?: Partial<ReplayOptions> };

/** What McpServer reads its groups from: the groups, and the flat names of the release before. */
export type GroupedInput = FlatServerOptions & {
  state?: ServerStateOptions;
  rounds?: ServerRoundOptions;
  tasks?: false | TaskOptions;
};

/** Options whose flat names were moved into their groups. */
export type Grouped<T> = Omit<T, FlatName | 'state' | 'rounds'> & {
  state: ServerStateOptions;
  rounds: ReadRoundOptions;
};

const KNOWN = {
  state: names({
    keys: 1,
    audience: 1,
    maxBytes: 1,
    compression: 1,
    codec: 1,
  } satisfies Keys<ServerStateOptions>),
  rounds: names({
    maxRounds: 1,
    handlerTimeoutMs: 1,
    hookTimeoutMs: 1,
    guards: 1,
    observers: 1,
    links: 1,
    replay: 1,
  } satisfies Keys<ServerRoundOptions>),
  'rounds.replay': names({
    store: 1,
    maxCachedAnswerBytes: 1,
    leaseMs: 1,
    waitMs: 1,
    clockSkewMs: 1,
    refusals: 1,
    now: 1,
    pause: 1,
  } satisfies Keys<ReplayOptions>),
  tasks: names({
    store: 1,
    ttlMs: 1,
    pollIntervalMs: 1,
    leaseMs: 1,
    maxPerPrincipal: 1,
  } satisfies Keys<TaskOptions>),
};

/** Whether `key` is one of the flat names of the release before. */
export function isFlatOption(key: string): boolean {
  return Object.hasOwn(FLAT_OPTIONS, key);
}

/**
 * The options with every flat name moved into its group, each group checked: unknown keys, both spellings of one
 * option, numbers out of range, guards, observers and stores of the wrong shape. Errors name the spelling given.
 */
export function withOptionGroups<T extends GroupedInput>(options: T): Grouped<T> {
  const state: Record<string, unknown> = { ...group(options.state, 'state') };
  const rounds: Record<string, unknown> = { ...group(options.rounds, 'rounds') };
  if (rounds.replay !== undefined) {
    const replay = group(rounds.replay, 'rounds.replay');
    if (replay.store === undefined)
      throw new InvalidOptionError(
        'McpServer: rounds.replay needs a store (the replay guard keeps its records there): give rounds.replay.store, or leave replay out',
      );
  }
  // Anything but an object is refused when the core is built, as before; an object's keys are checked here.
  if (typeof options.tasks === 'object' && options.tasks !== null) group(options.tasks, 'tasks');
  // Which flat name a grouped option came from, so that an error names what the caller wrote.
  const spelled = new Map<string, string>();
  const rest: Record<string, unknown> = { ...(options as object) };
  for (const flat of Object.keys(FLAT_OPTIONS) as FlatName[]) {
    const value = options[flat];
    delete rest[flat];
    if (value === undefined) continue;
    const grouped = FLAT_OPTIONS[flat];
    const [groupName, key] = grouped.split('.') as ['state' | 'rounds', string];
    const target = groupName === 'state' ? state : rounds;
    const replaced = options[groupName] as Record<string, unknown> | undefined;
    if (replaced?.[key] !== undefined)
      throw new InvalidOptionError(
        `McpServer: both ${flat} and ${grouped} were given: give ${grouped} only (${flat} is its old name)`,
      );
    spelled.set(grouped, flat);
    if (key !== 'replay') target[key] = value;
    else if (flat === 'replay') target.replay = { ...(value as object), ...(target.replay as object) };
    else target.replay = { ...(target.replay as object), store: value };
  }
  const named = (grouped: string) => spelled.get(grouped) ?? grouped;
  checkValues(state as ServerStateOptions, rounds as ReadRoundOptions, named);
  return { ...rest, state, rounds } as unknown as Grouped<T>;
}

function checkValues(
  state: ServerStateOptions,
  rounds: ReadRoundOptions,
  named: (grouped: string) => string,
): void {
  const integer = (grouped: string, value: number | undefined, max: number) =>
    checkIntegerOption('McpServer', named(grouped), value, { max });
  integer('rounds.handlerTimeoutMs', rounds.handlerTimeoutMs, MAX_TIMER_MS);
  integer('rounds.hookTimeoutMs', rounds.hookTimeoutMs, MAX_TIMER_MS);
  // The round cap is a security bound: NaN or a fraction must never switch it off.
  integer('rounds.maxRounds', rounds.maxRounds, 1000);
  integer('state.maxBytes', state.maxBytes, 1024 ** 3);
  for (const [i, guard] of (rounds.guards ?? []).entries()) {
    if (
      typeof guard?.name !== 'string' ||
      (guard.admit ?? guard.ask ?? guard.commit ?? guard.release) === undefined
    )
      throw new InvalidOptionError(
        `McpServer: ${named('rounds.guards')}[${i}] needs a name and at least one of admit, ask, commit, release`,
      );
  }
  for (const [i, observer] of (rounds.observers ?? []).entries()) {
    if (typeof observer?.observe !== 'function')
      throw new InvalidOptionError(
        `McpServer: ${named('rounds.observers')}[${i}] needs an observe(event) function`,
      );
  }
  for (const [i, link] of (rounds.links ?? []).entries())
    if (typeof link?.name !== 'string' || typeof link.handle !== 'function')
      throw new InvalidOptionError(
        `McpServer: rounds.links[${i}] needs a name and a handle(round, next) function`,
      );
  const store = rounds.replay?.store as Partial<SharedStore> | undefined;
  if (
    store !== undefined &&
    !['get', 'create', 'replace', 'remove', 'increment'].every(
      (method) => typeof store?.[method as keyof SharedStore] === 'function',
    )
  )
    throw new InvalidOptionError(
      `McpServer: ${named('rounds.replay.store')} must be a store from mrtr/stores (memory, SQLite, Redis) or keep its contract`,
    );
}

/** One group's value, refused unless it is an object whose every key the group knows. */
function group(value: unknown, name: keyof typeof KNOWN): Record<string, unknown> {
  if (value === undefined) return {};
  const known = KNOWN[name];
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new InvalidOptionError(`McpServer: ${name} must be an object { ${known.join('?, ')}? }`);
  for (const key of Object.keys(value)) {
    if (!known.includes(key))
      throw new InvalidOptionError(
        `McpServer: unknown option "${name}.${key}" (${name} takes: ${known.join(', ')})`,
      );
  }
  return value as Record<string, unknown>;
}

/** Every key of T, so the compiler checks a list of names against the type it names. */
type Keys<T> = Record<keyof T, 1>;

function names(keys: Record<string, 1>): readonly string[] {
  return Object.keys(keys);
}
