// held (internal): things held open across rounds for the other side's answer — the pending-answer table with its
// time limits, the fair shares that bound it per holder and in all, and the relay that carries an answer to the
// instance holding the wait. The server's 2025 bridge and the client's held 2025 upstream calls both stand on it.
export type { AnswerRelay, RelayedAnswer } from './answer-relay.js';
export {
  FairShares,
  type ShareLimits,
  type ShareRefusals,
  shareLimitProblem,
  slowedRefusal,
} from './fair-shares.js';
export { PendingAnswers, type WaitFor } from './pending-answers.js';
