// Lent to the other rooms of mrtr, not public API (mrtr/flow is index.ts): the flow engine the round pipeline drives.

export { FlowPause } from './errors.js';
export { type FlowJournal, isFlowJournal } from './journal.js';
export { type FlowRoundInput, type FlowRoundOutcome, runFlowRound } from './run.js';
