// mrtr/guard: round guards built on the shared stores — single-use requestState with safe identical retries,
// stale-round and finished-flow refusals, exactly-once steps, and a per-principal refusal limit.
export type { GuardPrincipal, OpenedRound, ScreenedRound } from './guarded.js';
export {
  COUNTED_REFUSALS,
  REFUSAL_LIMIT_DEFAULTS,
  RefusalLimit,
  type RefusalLimitOptions,
} from './refusal-limit.js';
export { REPLAY_GUARD_DEFAULTS, ReplayGuard, type ReplayGuardOptions } from './replay-guard.js';
export { StoreStepLedger } from './step-ledger.js';
