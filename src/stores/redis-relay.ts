// Answers of 2025 clients across a fleet, over Redis pub/sub: the instance holding a waiting request subscribes to
// its own channel, and whichever instance receives the client's answer publishes it there. PUBLISH tells how many
// instances listen, so an answer for an instance that is gone is known at once, not lost in silence. Structural
// (the server's AnswerRelay shape), so this room needs no server import.
import type { RedisClientType } from 'redis';

export interface RelayedMessage {
  id: string;
  session: string;
  message: Record<string, unknown>;
}

const channel = (instance: string) => `mrtr:legacy-answers:${instance}`;

export class RedisAnswerRelay {
  readonly #publisher: RedisClientType;
  readonly #subscriber: RedisClientType;

  private constructor(
    url: string,
    onError: (error: Error) => void,
    createClient: typeof import('redis').createClient,
  ) {
    this.#publisher = createClient({ url });
    this.#subscriber = this.#publisher.duplicate();
    this.#publisher.on('error', onError);
    this.#subscriber.on('error', onError);
  }

  /** Connect both clients (publishing and subscribing need separate connections in Redis). */
  static async connect(url: string, onError: (error: Error) => void = () => {}): Promise<RedisAnswerRelay> {
    // Loaded on first use, as RedisStore does: most servers never talk to Redis.
    const { createClient } = await import('redis');
    const relay = new RedisAnswerRelay(url, onError, createClient);
    await Promise.all([relay.#publisher.connect(), relay.#subscriber.connect()]);
    return relay;
  }

  async publish(instance: string, answer: RelayedMessage): Promise<boolean> {
    const listeners = await this.#publisher.publish(channel(instance), JSON.stringify(answer));
    return listeners > 0;
  }

  async subscribe(
    instance: string,
    onAnswer: (answer: RelayedMessage) => void,
  ): Promise<() => Promise<void>> {
    const name = channel(instance);
    await this.#subscriber.subscribe(name, (text) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return;
      }
      const a = parsed as Partial<RelayedMessage>;
      if (
        typeof a?.id === 'string' &&
        typeof a.session === 'string' &&
        a.message &&
        typeof a.message === 'object'
      )
        onAnswer(a as RelayedMessage);
    });
    return () => this.#subscriber.unsubscribe(name);
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.#subscriber.quit(), this.#publisher.quit()]);
  }
}
