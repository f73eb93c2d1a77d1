// Lent to the other rooms of mrtr, not public API (mrtr/protocol is index.ts): the one race of a wait against an
// AbortSignal, which server, client, gateway and notify all need and none may import from another.
export { followAbort, pauseUntilAborted, untilAborted } from './abort-race.js';
