// One error base with a closed set of codes: every error class an entry point exports is an MrtrError whose code is
// in MRTR_ERROR_CODES (or one of the named JSON-RPC errors, whose numeric code is the wire's), and the errors a user
// causes — a bad option, a bad key spec, a bad URL, a bad store or audit spec — arrive as MrtrErrors with their code.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openAuditSink } from '../../src/audit/index.js';
import { BearerAuth, DevTokens } from '../../src/auth/index.js';
import { parseCommandLine } from '../../src/cli/cli-args.js';
import * as client from '../../src/client/index.js';
import { McpClient, paramHeaders, unwrapOutcome } from '../../src/client/index.js';
import { HumanControls, totpSecretsFile } from '../../src/controls/index.js';
import { elicitationForm } from '../../src/flow/index.js';
import * as root from '../../src/index.js';
import * as protocol from '../../src/protocol/index.js';
import {
  ErrorCode,
  McpError,
  MRTR_ERROR_CODES,
  MrtrError,
  type MrtrErrorCode,
  schemaValidator,
} from '../../src/protocol/index.js';
import * as server from '../../src/server/index.js';
import { McpServer, text } from '../../src/server/index.js';
import * as state from '../../src/state/index.js';
import { Keyring, type StateCodec } from '../../src/state/index.js';
import { MemoryStore, openStore } from '../../src/stores/index.js';

type ErrorClass = abstract new (...args: never[]) => Error;

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, unknown>;
};

/** Every public entry point, from package.json's exports, as the module a user imports. */
const entryPoints = async (): Promise<Array<[string, Record<string, unknown>]>> =>
  Promise.all(
    Object.keys(packageJson.exports).map(async (entry) => {
      const path = entry === '.' ? 'index.js' : `${entry.slice(2)}/index.js`;
      return [entry, (await import(`../../src/${path}`)) as Record<string, unknown>] as [
        string,
        Record<string, unknown>,
      ];
    }),
  );

const isErrorClass = (v: unknown): v is ErrorClass =>
  typeof v === 'function' && (v === Error || v.prototype instanceof Error);

/**
 * One instance of every exported error class, and the code it carries. A class an entry point starts to export
 * without a row here fails the first test: add its row, with the code users may branch on.
 */
const INSTANCES: Record<string, () => Error> = {
  MrtrError: () => new MrtrError('ERR_INVALID_OPTION', 'm'),
  AuthRefusal: () => new root.AuthRefusal('invalid_token', 'expired', 'm'),
  FlowEnded: () => new root.FlowEnded('m', 'declined'),
  HandlerTimeoutError: () => new root.HandlerTimeoutError(5),
  InvalidOptionError: () => new root.InvalidOptionError('m'),
  ServerError: () => new root.ServerError('ERR_REGISTRATION', 'm'),
  KeySpecError: () => new root.KeySpecError('m'),
  NotJsonError: () => new state.NotJsonError('m'),
  StateUsageError: () => new state.StateUsageError('m'),
  StateRangeError: () => new state.StateRangeError('m'),
  StateTooLargeError: () => new state.StateTooLargeError('m'),
  OAuthError: () => new client.OAuthError('m', 401),
  ProtocolViolation: () => new client.ProtocolViolation('m'),
  RequestAborted: () => new client.RequestAborted(new Error('stop')),
  SessionExpired: () => new client.SessionExpired('m'),
  TransportFailure: () => new client.TransportFailure('m'),
  HeldCallError: () => new client.HeldCallError('ERR_HELD_CALL_USED', 'm'),
};

const EXPECTED_CODES: Record<string, MrtrErrorCode> = {
  MrtrError: 'ERR_INVALID_OPTION',
  AuthRefusal: 'ERR_AUTH_INVALID_TOKEN',
  FlowEnded: 'ERR_FLOW_ENDED',
  HandlerTimeoutError: 'ERR_HANDLER_TIMEOUT',
  InvalidOptionError: 'ERR_INVALID_OPTION',
  ServerError: 'ERR_REGISTRATION',
  KeySpecError: 'ERR_KEY_SPEC',
  NotJsonError: 'ERR_NOT_JSON',
  StateUsageError: 'ERR_STATE_USAGE',
  StateRangeError: 'ERR_STATE_USAGE',
  StateTooLargeError: 'ERR_STATE_TOO_LARGE',
  OAuthError: 'ERR_OAUTH',
  ProtocolViolation: 'ERR_PROTOCOL_VIOLATION',
  RequestAborted: 'ERR_ABORTED',
  SessionExpired: 'ERR_SESSION_EXPIRED',
  TransportFailure: 'ERR_TRANSPORT',
  HeldCallError: 'ERR_HELD_CALL_USED',
  FlowUsageError: 'ERR_FLOW_USAGE',
  StoreUnavailableError: 'ERR_STORE_UNAVAILABLE',
  BearerAuthConfigError: 'ERR_AUTH_CONFIG',
  DevTokensError: 'ERR_AUTH_DEV_TOKENS',
  FormError: 'ERR_PAGE_FORM',
  IssuerMetadataError: 'ERR_AUTH_ISSUER_METADATA',
  JwtVerifierConfigError: 'ERR_AUTH_CONFIG',
  SignInConfigError: 'ERR_SIGNIN_CONFIG',
  AuditError: 'ERR_AUDIT_CONFIG',
  ApprovalRefused: 'ERR_APPROVAL_REFUSED',
  ControlsUsageError: 'ERR_CONTROLS_USAGE',
  ConnectionsUsageError: 'ERR_CONNECTIONS_USAGE',
  ConnectionRefused: 'ERR_CONNECTION_REFUSED',
  GatewayConfigError: 'ERR_GATEWAY_CONFIG',
  EgressRefused: 'ERR_GATEWAY_EGRESS',
  ConsoleUsageError: 'ERR_CONSOLE_USAGE',
  NotifyConfigError: 'ERR_NOTIFY_CONFIG',
  WebhookVerifyError: 'ERR_WEBHOOK_REFUSED',
  InvalidArgumentError: 'ERR_INVALID_ARGUMENT',
  TimeLimitError: 'ERR_TIMEOUT',
  CorruptDataError: 'ERR_CORRUPT_DATA',
  MakeDirectoryError: 'ERR_MAKE_DIRECTORY',
  StoreContendedError: 'ERR_STORE_CONTENDED',
  CallIncompleteError: 'ERR_CALL_INCOMPLETE',
  GatewayPinsError: 'ERR_GATEWAY_PINS',
  AuthConfigError: 'ERR_AUTH_CONFIG',
};

/** The JSON-RPC errors: their `code` is the protocol's number, the one that goes on the wire. */
const WIRE_ERRORS: Record<string, () => Error & { code: number }> = {
  McpError: () => new McpError(ErrorCode.InvalidParams, 'm'),
  RoundRefused: () => new server.RoundRefused('expired'),
  HookTimeoutError: () => new server.HookTimeoutError('guard_timeout', 'a guard', 5),
  RemoteError: () => new client.RemoteError({ code: ErrorCode.InvalidParams, message: 'm' }),
};

/** Instances of the classes only some entry points export, built from the class itself with a message. */
const byMessage = (cls: ErrorClass): Error => {
  const C = cls as unknown as new (...args: unknown[]) => Error;
  switch (cls.name) {
    case 'StoreUnavailableError':
      return new C('memory', 'down');
    case 'AuditError':
      return new C('ERR_AUDIT_CONFIG', 'm');
    case 'ApprovalRefused':
      return new C('forbidden', 'not_a_reviewer', 'm');
    case 'WebhookVerifyError':
      return new C('bad_signature', 'm');
    case 'ConnectionRefused':
      return new C('denied', 'm');
    default:
      return new C('m');
  }
};

describe('MrtrError', () => {
  it('lists each code once, in the ERR_ form, frozen', () => {
    expect(new Set(MRTR_ERROR_CODES).size).toBe(MRTR_ERROR_CODES.length);
    for (const code of MRTR_ERROR_CODES) expect(code).toMatch(/^ERR_[A-Z0-9_]+$/);
    expect(Object.isFrozen(MRTR_ERROR_CODES)).toBe(true);
  });

  it('carries its code, message, cause and name', () => {
    const cause = new Error('under');
    const e = new MrtrError('ERR_TIMEOUT', 'too slow', { cause });
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({ code: 'ERR_TIMEOUT', message: 'too slow', cause, name: 'MrtrError' });
  });

  it('is the same class from mrtr, mrtr/server, mrtr/client and mrtr/protocol', () => {
    expect(root.MrtrError).toBe(protocol.MrtrError);
    expect(server.MrtrError).toBe(protocol.MrtrError);
    expect(client.MrtrError).toBe(protocol.MrtrError);
  });

  it('is the base of every error class each entry point exports, with a code in the union and its name', async () => {
    const seen: string[] = [];
    for (const [entry, exports] of await entryPoints()) {
      for (const [name, value] of Object.entries(exports)) {
        if (!isErrorClass(value)) continue;
        seen.push(`${entry}:${name}`);
        if (name in WIRE_ERRORS) {
          const e = WIRE_ERRORS[name]!();
          expect(e, name).toBeInstanceOf(value);
          expect(e instanceof McpError || e instanceof client.RemoteError, name).toBe(true);
          expect(Number.isInteger(e.code), name).toBe(true);
          continue;
        }
        expect(value === MrtrError || value.prototype instanceof MrtrError, `${entry}: ${name}`).toBe(true);
        const e = (INSTANCES[name] ?? (() => byMessage(value)))();
        expect(e, name).toBeInstanceOf(value);
        expect(e, name).toBeInstanceOf(MrtrError);
        const code = (e as MrtrError).code;
        expect(MRTR_ERROR_CODES, `${name}: ${code}`).toContain(code);
        expect(code, name).toBe(EXPECTED_CODES[name]);
        expect(e.name, name).toBe(
          name === 'OAuthError' || name === 'SessionExpired' ? 'TransportFailure' : name,
        );
      }
    }
    // The walk found them: the root's, the server's, the client's and the rooms' own.
    expect(seen).toEqual(
      expect.arrayContaining(['.:FlowEnded', './client:TransportFailure', './stores:StoreUnavailableError']),
    );
  });
});

const quiet = { info() {}, warn() {}, error() {} };
const thrown = async (fn: () => unknown): Promise<unknown> => {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  return 'did not throw';
};

/** What a user does wrong, room by room, and the code they get. */
const USER_ERRORS: Array<[string, MrtrErrorCode, () => unknown]> = [
  [
    'server: an option out of range',
    'ERR_INVALID_OPTION',
    () => new McpServer({ name: 'n', version: '1', maxRounds: 0 }),
  ],
  [
    'server: a tool name taken twice',
    'ERR_REGISTRATION',
    () =>
      new McpServer({ name: 'n', version: '1', logger: quiet })
        .tool({ name: 't', description: 'd' }, () => text('x'))
        .tool({ name: 't', description: 'd' }, () => text('x')),
  ],
  ['state: a key spec without a colon', 'ERR_KEY_SPEC', () => Keyring.fromSpec('no-colon')],
  [
    'state: a codec given something that is not a Keyring',
    'ERR_STATE_USAGE',
    () => new state.StateCodec({ keyring: {} as Keyring, audience: 'a' }),
  ],
  [
    'state: a payload with a bigint',
    'ERR_STATE_USAGE',
    () =>
      (
        new state.StateCodec({
          keyring: Keyring.fromSpec(`k:${Buffer.alloc(32, 1).toString('base64url')}`),
          audience: 'a',
        }) as StateCodec
      ).seal(1n, { principal: null, method: 'tools/call', target: 't', arguments: {} }),
  ],
  [
    'client: a server URL that is not a URL',
    'ERR_INVALID_OPTION',
    () => new McpClient({ server: 'not a url' }),
  ],
  [
    'client: a server URL that is not http(s)',
    'ERR_INVALID_OPTION',
    () => new McpClient({ server: 'ftp://x/mcp' }),
  ],
  [
    'client: a protocol version it does not speak',
    'ERR_INVALID_OPTION',
    () => new McpClient({ server: 'http://127.0.0.1:1/mcp', protocol: '1999-01-01' }),
  ],
  [
    'client: a value no header can carry',
    'ERR_INVALID_ARGUMENT',
    () => paramHeaders([{ header: 'N', path: ['n'] }], { n: 1.5 }),
  ],
  [
    'client: the result of a call that timed out',
    'ERR_CALL_INCOMPLETE',
    () => unwrapOutcome({ status: 'timeout', rounds: 1, timeoutMs: 5 }),
  ],
  ['stores: an unknown store spec', 'ERR_INVALID_OPTION', () => openStore('mongodb://x')],
  ['stores: an empty key', 'ERR_INVALID_ARGUMENT', () => new MemoryStore().get('')],
  [
    'stores: a closed store',
    'ERR_STORE_UNAVAILABLE',
    async () => {
      const store = new MemoryStore();
      await store.close();
      return store.get('k');
    },
  ],
  ['audit: an unknown sink spec', 'ERR_AUDIT_CONFIG', () => openAuditSink('mysql://x')],
  ['auth: a BearerAuth without a verifier', 'ERR_AUTH_CONFIG', () => new BearerAuth({} as never)],
  [
    'auth: a tokens file that is not there',
    'ERR_AUTH_DEV_TOKENS',
    () => DevTokens.fromFile('/nonexistent/tokens.json'),
  ],
  [
    'flow: a form zod cannot send',
    'ERR_FLOW_USAGE',
    () => elicitationForm(z.object({ nested: z.object({ a: z.string() }) })),
  ],
  ['controls: HumanControls without a store', 'ERR_CONTROLS_USAGE', () => new HumanControls({} as never)],
  [
    'controls: a TOTP secrets file that is not one',
    'ERR_CORRUPT_DATA',
    () => {
      const path = join(mkdtempSync(join(tmpdir(), 'mrtr-errors-')), 'totp.json');
      writeFileSync(path, 'not json');
      return totpSecretsFile(path).secretOf('alice');
    },
  ],
  [
    'protocol: a schema definition that does not exist',
    'ERR_INVALID_ARGUMENT',
    () => schemaValidator('NoSuchThing'),
  ],
  ['cli: an unknown option', 'ERR_USAGE', () => parseCommandLine(['--nope'], { yes: { type: 'boolean' } })],
];

describe('errors a user causes', () => {
  it.each(USER_ERRORS)('%s: MrtrError %s', async (_what, code, cause) => {
    const error = await thrown(cause);
    expect(error).toBeInstanceOf(MrtrError);
    expect(error).toMatchObject({ code });
  });
});
