// The fleet's store: Redis (node-redis). Each entry is a hash {v: version, d: value} with a TTL; every operation
// that reads and writes is one Lua script, so it is atomic on the server whatever the number of instances.
import { createHash } from 'node:crypto';
import type { RedisClientType } from 'redis';
import { TimeLimitError } from '../protocol/index.js';
import { checkEntry, type SharedStore, type StoredEntry, StoreUnavailableError } from './contract.js';
import { RedisChannel } from './redis-channel.js';

export interface RedisStoreOptions {
  /** Longest wait for one command before the store counts as unavailable (default 2 s). */
  commandTimeoutMs?: number;
  /** Called with connection errors (the client reconnects by itself); default: ignored. */
  onError?: (error: Error) => void;
}

const SCRIPTS = {
  create: `if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 'd', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`,
  replace: `if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', tonumber(ARGV[1]) + 1, 'd', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`,
  remove: `if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`,
  // The window's expiry is set once, when the counter is born: counting never extends it.
  increment: `local n = redis.call('HINCRBY', KEYS[1], 'v', 1)
if n == 1 then
  redis.call('HSET', KEYS[1], 'd', '')
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return n`,
} as const;

type ScriptName = keyof typeof SCRIPTS;
const SHA: Record<ScriptName, string> = Object.fromEntries(
  Object.entries(SCRIPTS).map(([name, body]) => [name, createHash('sha1').update(body).digest('hex')]),
) as Record<ScriptName, string>;

/** `redis://host:port/db` without the password, for logs. */
function describe(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    u.username = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return 'redis';
  }
}

export class RedisStore implements SharedStore {
  readonly description: string;
  readonly #client: RedisClientType;
  readonly #timeoutMs: number;
  /** News between the instances of a fleet (an approval decided on one wakes the caller holding on another). */
  readonly channel: RedisChannel;

  private constructor(
    url: string,
    options: RedisStoreOptions,
    createClient: typeof import('redis').createClient,
  ) {
    this.description = describe(url);
    this.#timeoutMs = options.commandTimeoutMs ?? 2000;
    this.#client = createClient({
      url,
      // Fail closed at once while disconnected instead of queueing rounds behind an outage; reconnect by itself.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: this.#timeoutMs,
        reconnectStrategy: (retries) => Math.min(50 * 2 ** Math.min(retries, 5), 1000),
      },
    }) as RedisClientType;
    const onError = (error: Error) => options.onError?.(error);
    this.#client.on('error', onError);
    this.channel = new RedisChannel(this.#client, (args) => this.#command(args), onError);
  }

  /**
   * Connect to `url`. Resolves once connected, or after `readyWithinMs` with the client still reconnecting in the
   * background (rounds fail closed until it is back): a server can start while its Redis is down.
   */
  static async connect(
    url: string,
    options: RedisStoreOptions & { readyWithinMs?: number } = {},
  ): Promise<RedisStore> {
    // Loaded on first use: the client library is the largest module mrtr can load (~18 MiB), and most servers never
    // talk to Redis.
    const { createClient } = await import('redis');
    const store = new RedisStore(url, options, createClient);
    const connecting = store.#client.connect().then(
      () => true,
      () => false,
    );
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), options.readyWithinMs ?? 5000);
    });
    await Promise.race([connecting, gaveUp]);
    clearTimeout(timer);
    return store;
  }

  get isReady(): boolean {
    return this.#client.isReady;
  }

  /** Resolves when the connection is ready (at once if it is): after an outage, when Redis is back. */
  whenReady(): Promise<void> {
    if (this.#client.isReady) return Promise.resolve();
    return new Promise((resolve) => this.#client.once('ready', () => resolve()));
  }

  async get(key: string): Promise<StoredEntry | undefined> {
    checkEntry(key);
    const [version, value] = (await this.#command(['HMGET', key, 'v', 'd'])) as [
      string | null,
      string | null,
    ];
    return version === null || value === null ? undefined : { value, version: Number(version) };
  }

  async create(key: string, value: string, ttlMs: number): Promise<boolean> {
    checkEntry(key, value, ttlMs);
    return (await this.#script('create', key, value, String(ttlMs))) === 1;
  }

  async replace(key: string, version: number, value: string, ttlMs: number): Promise<boolean> {
    checkEntry(key, value, ttlMs);
    return (await this.#script('replace', key, String(version), value, String(ttlMs))) === 1;
  }

  async remove(key: string, version: number): Promise<boolean> {
    checkEntry(key);
    return (await this.#script('remove', key, String(version))) === 1;
  }

  async increment(key: string, ttlMs: number): Promise<number> {
    checkEntry(key, undefined, ttlMs);
    return Number(await this.#script('increment', key, String(ttlMs)));
  }

  async close(): Promise<void> {
    await this.channel.close();
    if (this.#client.isOpen) await this.#client.close();
    else this.#client.destroy();
  }

  async #script(name: ScriptName, key: string, ...args: string[]): Promise<unknown> {
    try {
      return await this.#command(['EVALSHA', SHA[name], '1', key, ...args]);
    } catch (error) {
      // First use on this Redis (or after a restart): load the script by sending it whole once.
      if (!(error instanceof StoreUnavailableError && /NOSCRIPT/.test(String(error.cause)))) throw error;
      return this.#command(['EVAL', SCRIPTS[name], '1', key, ...args]);
    }
  }

  async #command(args: string[]): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    // A hung Redis (stopped, partitioned) answers nothing and closes nothing: without our own limit a round would
    // wait for as long as the socket stays open.
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new TimeLimitError(`no answer within ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      );
    });
    try {
      return await Promise.race([this.#client.sendCommand(args), timedOut]);
    } catch (error) {
      throw new StoreUnavailableError(this.description, error);
    } finally {
      clearTimeout(timer);
    }
  }
}
