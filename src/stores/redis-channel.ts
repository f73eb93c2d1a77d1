// The Redis store's channel (pub/sub): PUBLISH goes on the store's own connection, SUBSCRIBE on a second one opened
// at the first subscription, since a subscribed Redis connection can send nothing else. After a reconnect node-redis
// subscribes again by itself; what was published meanwhile is lost, as the contract says.
import type { RedisClientType } from 'redis';
import type { StoreChannel } from './contract.js';

export class RedisChannel implements StoreChannel {
  #subscriber: Promise<RedisClientType> | undefined;

  constructor(
    private readonly client: RedisClientType,
    private readonly send: (args: string[]) => Promise<unknown>,
    private readonly onError: (error: Error) => void,
  ) {}

  async publish(topic: string, message: string): Promise<void> {
    await this.send(['PUBLISH', topic, message]);
  }

  async subscribe(topic: string, onMessage: (message: string) => void): Promise<() => Promise<void>> {
    const subscriber = await this.#connected();
    const listener = (message: string) => onMessage(message);
    await subscriber.subscribe(topic, listener);
    return async () => {
      if (subscriber.isOpen) await subscriber.unsubscribe(topic, listener);
    };
  }

  async close(): Promise<void> {
    const subscriber = await this.#subscriber?.catch(() => undefined);
    if (subscriber?.isOpen) await subscriber.close();
    else subscriber?.destroy();
  }

  #connected(): Promise<RedisClientType> {
    this.#subscriber ??= (async () => {
      const subscriber = this.client.duplicate() as RedisClientType;
      subscriber.on('error', this.onError);
      await subscriber.connect();
      return subscriber;
    })().catch((error: unknown) => {
      // Failed to connect: the next subscription tries again rather than failing forever.
      this.#subscriber = undefined;
      throw error;
    });
    return this.#subscriber;
  }
}
