// Wake-ups across a fleet: a person's action recorded on one instance wakes the checks holding on the others at
// once, over the store's channel (Redis pub/sub), instead of leaving them to their hold's limit. Each instance
// listens once, before its first hold, so a decision published after a hold began always reaches it.
import { randomUUID } from 'node:crypto';
import type { StoreChannel } from '../stores/index.js';

/** The topic every instance of a fleet listens on. */
export const WAKE_TOPIC = 'mrtr:controls:wake';

interface WakeMessage {
  readonly from: string;
  readonly key: string;
  /** The person's action settled it (granted, denied, done), not only moved it (one vote of two). */
  readonly settled: boolean;
}

export class FleetWakeups {
  /** Who this instance is on the channel: its own messages were already acted on locally. */
  readonly #self = randomUUID();
  #listening: Promise<void> | undefined;

  constructor(
    private readonly channel: StoreChannel,
    /** Called with the key another instance woke (`approval/<id>`, `step_up/<id>`). */
    private readonly woken: (key: string, settled: boolean) => void,
    /** A failure of the channel: holds then end at their limit, as on one instance. */
    private readonly failed: (error: unknown) => void,
    /** Another family of keys (the connections') listens on its own topic, so neither reads the other's keys. */
    private readonly topic: string = WAKE_TOPIC,
  ) {}

  /** Resolves once this instance listens (subscribing at the first call); never rejects. */
  listening(): Promise<void> {
    this.#listening ??= this.channel
      .subscribe(this.topic, (text) => this.#heard(text))
      .then(
        () => undefined,
        (error: unknown) => {
          this.#listening = undefined; // the next hold tries again
          this.failed(error);
        },
      );
    return this.#listening;
  }

  /** Tell the other instances that `key` changed; a failure only costs them their hold's limit. */
  tell(key: string, settled: boolean): void {
    const message: WakeMessage = { from: this.#self, key, settled };
    this.channel.publish(this.topic, JSON.stringify(message)).catch(this.failed);
  }

  #heard(text: string): void {
    let message: Partial<WakeMessage> | undefined;
    try {
      message = JSON.parse(text) as Partial<WakeMessage>;
    } catch {
      return;
    }
    if (typeof message?.key !== 'string' || message.from === this.#self) return;
    this.woken(message.key, message.settled === true);
  }
}
