// How a 2025 client's answer finds the instance whose request waits for it: the held room's relay (held/answer-relay.ts),
// with the server's principal as the one who answered (the waiting flow's next round runs as them).
import type { AnswerRelay as HeldAnswerRelay, RelayedAnswer as HeldRelayedAnswer } from '../../held/index.js';
import type { Principal } from '../context.js';

export type RelayedAnswer = HeldRelayedAnswer<Principal>;
export type AnswerRelay = HeldAnswerRelay<Principal>;
