// The round as one chain of links (round/link.ts, round/chain.ts): links run in order and see what the rest
// answered; a link answers, refuses, asks in the flow, or wraps next(); synchronous links make no promise; and the
// RoundGuard adapter keeps the guards' order (admits in order, commits in reverse, release on failure, refused).
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest, JsonRpcResponse, Result } from '../../src/protocol/index.js';
import { RoundRefused } from '../../src/protocol/index.js';
import {
  composeRound,
  McpServer,
  type Round,
  type RoundEvent,
  type RoundGuard,
  type RoundLink,
  RoundRunner,
  SealedStateCodec,
  text,
} from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { META } from '../helpers/mcp-http.js';

const quiet = { info() {}, warn() {}, error() {} };
const env = { principal: { subject: 'alice' }, signal: new AbortController().signal, notify() {} };
const keyring = Keyring.fromSpec(`k1:${Buffer.alloc(32, 7).toString('base64url')}`);
const codec = new SealedStateCodec({ keyring, audience: 'chain-test' });
const done: Result = { resultType: 'complete', content: [] };
/** composeRound never reads the round itself: the links do. */
const aRound = {} as Round;

const request = (extra: Record<string, unknown> = {}): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    _meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } },
    name: 'deploy',
    arguments: {},
    ...extra,
  },
});
type Answered = { result: Record<string, unknown> & { requestState?: string }; error?: { code: number } };
const answered = (r: JsonRpcResponse) => r as unknown as Answered;

/** A link that writes down when it enters and leaves, then passes on. */
const passing = (name: string, log: string[]): RoundLink => ({
  name,
  handle(_round, next) {
    log.push(`${name}>`);
    const result = next();
    log.push(`<${name}`);
    return result;
  },
});

describe('composeRound', () => {
  it('runs the links in order, each around the rest, and stays synchronous when they are', () => {
    const log: string[] = [];
    const end: RoundLink = {
      name: 'end',
      handle: () => {
        log.push('end');
        return done;
      },
    };
    const chain = composeRound([passing('a', log), passing('b', log), end]);
    const result = chain(aRound);
    // No promise: the fast path of a synchronous chain.
    expect(result).not.toBeInstanceOf(Promise);
    expect(result).toBe(done);
    expect(log).toEqual(['a>', 'b>', 'end', '<b', '<a']);
  });

  it('a link that answers stops the chain there: the links after it never run', () => {
    const log: string[] = [];
    const answering: RoundLink = { name: 'cache', handle: () => ({ ...done, cached: true }) };
    const never: RoundLink = {
      name: 'never',
      handle: () => {
        log.push('never');
        return done;
      },
    };
    expect(composeRound([passing('a', log), answering, never])(aRound)).toMatchObject({ cached: true });
    expect(log).toEqual(['a>', '<a']);
  });

  it('a link that refuses throws to the links before it, which see the refusal', () => {
    const seen: unknown[] = [];
    const watching: RoundLink = {
      name: 'watch',
      handle(_round, next) {
        try {
          return next();
        } catch (error) {
          seen.push(error);
          throw error;
        }
      },
    };
    const refusing: RoundLink = {
      name: 'limit',
      handle() {
        throw new RoundRefused('too_many', { code: -32600, message: 'Too many' });
      },
    };
    expect(() => composeRound([watching, refusing])(aRound)).toThrow('Too many');
    expect(seen).toHaveLength(1);
  });

  it('a link sees what next() answered, and lets go of what it took when the rest failed', async () => {
    const log: string[] = [];
    const claiming: RoundLink = {
      name: 'claim',
      async handle(_round, next) {
        log.push('claim');
        try {
          const result = await next();
          log.push(`commit ${result.resultType}`);
          return result;
        } catch (error) {
          log.push('release');
          throw error;
        }
      },
    };
    const ok: RoundLink = { name: 'ok', handle: async () => done };
    const failing: RoundLink = {
      name: 'failing',
      handle: async () => {
        throw new RoundRefused('nope', { code: -32600, message: 'No' });
      },
    };
    await expect(composeRound([claiming, ok])(aRound)).resolves.toBe(done);
    await expect(composeRound([claiming, failing])(aRound)).rejects.toThrow('No');
    expect(log).toEqual(['claim', 'commit complete', 'claim', 'release']);
  });

  it('refuses a link that calls next() twice, and one that calls next() past the last link', () => {
    const twice: RoundLink = {
      name: 'twice',
      handle(_round, next) {
        next();
        return next();
      },
    };
    const end: RoundLink = { name: 'end', handle: () => done };
    expect(() => composeRound([twice, end])(aRound)).toThrow(
      expect.objectContaining({
        code: 'ERR_HANDLER_CONTRACT',
        message: 'round link "twice" called next() twice',
      }),
    );
    expect(() => composeRound([passing('last', [])])(aRound)).toThrow(
      'round link "last" called next(), but no link follows it',
    );
  });
});

describe('the round chain in a runner', () => {
  it('is synchronous end to end for a synchronous handler and synchronous guards (no promise)', () => {
    const rounds = new RoundRunner({
      codec,
      logger: quiet,
      guards: [{ name: 'sync', admit: () => undefined, commit: () => undefined }],
    });
    const response = rounds.run(request(), env, { target: 'deploy', invoke: () => text('done') });
    expect(response).not.toBeInstanceOf(Promise);
    expect(answered(response as JsonRpcResponse).result).toMatchObject({ resultType: 'complete' });
  });

  it('a link in the flow asks with round.ctx, and the handler runs once it is answered', async () => {
    const ran: string[] = [];
    const consent: RoundLink = {
      name: 'consent',
      async handle(round, next) {
        const ok = await round.ctx!.ask.confirm('Deploy?', { key: 'consent' });
        if (!ok) return { resultType: 'complete', content: [{ type: 'text', text: 'not deployed' }] };
        return next();
      },
    };
    const rounds = new RoundRunner({ codec, logger: quiet, links: [consent] });
    const entry = {
      target: 'deploy',
      invoke: () => {
        ran.push('deploy');
        return text('deployed');
      },
    };
    const first = answered(await rounds.run(request(), env, entry)).result;
    expect(first).toMatchObject({ resultType: 'input_required', inputRequests: { consent: {} } });
    expect(ran).toEqual([]);
    const second = answered(
      await rounds.run(
        request({
          requestState: first.requestState,
          inputResponses: { consent: { action: 'accept', content: { confirm: true } } },
        }),
        env,
        entry,
      ),
    ).result;
    expect(second).toMatchObject({ resultType: 'complete', content: [{ text: 'deployed' }] });
    expect(ran).toEqual(['deploy']);
  });

  it('a link in the flow that answers takes the handler’s place, and the event names it', async () => {
    const events: RoundEvent[] = [];
    const deny: RoundLink = {
      name: 'policy',
      handle: () => ({ resultType: 'complete', content: [{ type: 'text', text: 'denied' }], isError: true }),
    };
    const rounds = new RoundRunner({
      codec,
      logger: quiet,
      links: [deny],
      observers: [{ observe: (e) => void events.push(e) }],
    });
    let ran = false;
    const response = await rounds.run(request(), env, {
      target: 'deploy',
      invoke: () => {
        ran = true;
        return text('x');
      },
    });
    expect(answered(response).result).toMatchObject({ isError: true, content: [{ text: 'denied' }] });
    expect(ran).toBe(false);
    expect(events[0]).toMatchObject({ decidedBy: 'policy', outcome: 'tool_error' });
  });
});

describe('the RoundGuard adapter', () => {
  function guards(log: string[], refuseIn?: string): RoundGuard[] {
    return ['A', 'B'].map((name) => ({
      name,
      screen: () => void log.push(`screen ${name}`),
      admit: () => {
        log.push(`admit ${name}`);
        if (refuseIn === name) throw new RoundRefused('replayed', { code: -32600, message: 'Replayed' });
      },
      commit: () => void log.push(`commit ${name}`),
      release: () => void log.push(`release ${name}`),
      refused: (_round, reason) => void log.push(`refused ${name} ${reason}`),
    }));
  }
  const entry = (invoke: () => unknown) => ({ target: 'deploy', invoke });

  it('screens and admits in order, commits in reverse order', async () => {
    const log: string[] = [];
    const rounds = new RoundRunner({ codec, logger: quiet, guards: guards(log) });
    await rounds.run(
      request(),
      env,
      entry(() => {
        log.push('handler');
        return text('ok');
      }),
    );
    expect(log).toEqual(['screen A', 'screen B', 'admit A', 'admit B', 'handler', 'commit B', 'commit A']);
  });

  it('a refusal in admit releases the guards that admitted, then is told to every guard', async () => {
    const log: string[] = [];
    const rounds = new RoundRunner({ codec, logger: quiet, guards: guards(log, 'B') });
    const response = answered(
      await rounds.run(
        request(),
        env,
        entry(() => text('ok')),
      ),
    );
    expect(response.error).toMatchObject({ code: -32600 });
    expect(log).toEqual([
      'screen A',
      'screen B',
      'admit A',
      'admit B',
      'release A',
      'refused A replayed',
      'refused B replayed',
    ]);
  });

  it('a handler that fails releases every guard in reverse order; nothing is committed', async () => {
    const log: string[] = [];
    const rounds = new RoundRunner({ codec, logger: quiet, guards: guards(log) });
    const response = answered(
      await rounds.run(
        request(),
        env,
        entry(() => {
          throw new RoundRefused('denied', { code: -32600, message: 'Denied' });
        }),
      ),
    );
    expect(response.error).toMatchObject({ code: -32600 });
    expect(log).toEqual([
      'screen A',
      'screen B',
      'admit A',
      'admit B',
      'release B',
      'release A',
      'refused A denied',
      'refused B denied',
    ]);
  });
});

describe('McpServer links', () => {
  it('run in every round before the handler, and refuse a link with no handle', async () => {
    const seen: string[] = [];
    const tagging: RoundLink = {
      name: 'tag',
      handle(round, next) {
        seen.push(round.target);
        return next();
      },
    };
    const core = new McpServer({ name: 's', version: '1', logger: quiet, rounds: { links: [tagging] } }).tool(
      { name: 'deploy', description: 'Deploys' },
      () => text('deployed'),
    ).core;
    const response = answered(await core.handle(request(), env));
    expect(response.result).toMatchObject({ content: [{ text: 'deployed' }] });
    expect(seen).toEqual(['deploy']);
    expect(
      () =>
        new McpServer({
          name: 's',
          version: '1',
          logger: quiet,
          rounds: { links: [{ name: 'x' } as never] },
        }),
    ).toThrow('McpServer: rounds.links[0] needs a name and a handle(round, next) function');
  });
});
