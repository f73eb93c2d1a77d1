// Lent to the other rooms of mrtr, not public API (mrtr/audit is index.ts): what the CLI's verify reads and splits.
export { splitNotes } from './checkpoint.js';
export { type FlowFilter, type FlowSummary, flowsOf, recordsOf, sinceTime } from './flows.js';
export { readForVerify } from './verify.js';
