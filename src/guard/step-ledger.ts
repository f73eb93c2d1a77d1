// Where a flow's ask.step results are kept in the shared store, besides the journal in its requestState: a round
// that runs again (its process died after a step, or a later guard refused it) finds the step's result here and
// does not repeat the effect.
import type { SharedStore } from '../stores/index.js';

export class StoreStepLedger {
  constructor(
    private readonly store: SharedStore,
    private readonly flowId: string,
    private readonly ttlMs: number,
    private readonly guarded: <T>(call: () => Promise<T>) => Promise<T>,
  ) {}

  /** The recorded result of the step at `position` (its key: position and digest of its name). */
  async recall(stepKey: string): Promise<{ value: unknown } | undefined> {
    const entry = await this.guarded(() => this.store.get(this.#key(stepKey)));
    return entry && { value: JSON.parse(entry.value) };
  }

  /** Record a step's result before the round's answer is sent. The first record wins; a step runs once. */
  async record(stepKey: string, value: unknown): Promise<void> {
    await this.guarded(() =>
      this.store.create(this.#key(stepKey), JSON.stringify(value ?? null), this.ttlMs),
    );
  }

  #key(stepKey: string): string {
    return `mrtr:step:${this.flowId}:${stepKey}`;
  }
}
