// The bridge's session store with the server's time bound on every operation: a shared store that stops answering
// (a custom SharedStore without timeouts of its own) must not hold 2025 clients' requests open for ever, as it
// cannot hold a 2026 round's (hookTimeoutMs bounds the guards there).
import type { SharedStore } from '../../stores/index.js';
import { isThenable } from '../maybe-async.js';
import { HookTimeoutError, withinTime } from '../time-bound.js';

export function boundedStore(store: SharedStore, limitMs: number): SharedStore {
  return new Proxy(store, {
    get(target, name, receiver) {
      const member = Reflect.get(target, name, receiver);
      if (typeof member !== 'function') return member;
      return (...args: unknown[]) => {
        const result: unknown = member.apply(target, args);
        if (!isThenable(result)) return result;
        return withinTime(
          result,
          limitMs,
          () => new HookTimeoutError('guard_timeout', "the 2025 bridge's session store", limitMs),
        );
      };
    },
  });
}
