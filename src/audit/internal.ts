// Lent to the other rooms of mrtr, not public API (mrtr/audit is index.ts): what the CLI's verify reads and splits.
export { splitNotes } from './checkpoint.js';
export { readForVerify } from './verify.js';
