// Lent to the other rooms of mrtr, not public API (mrtr/controls is index.ts): what the console shows of an
// approval request, drawn the way the review page draws it, so a vote is for the same facts on every surface; and
// what a page answers when it failed, the same on the console as on the controls' pages.

export { countOf, samePerson, stateAt } from './approval-book.js';
export type { ApprovalDecisions, DecisionInput } from './approval-decisions.js';
export {
  ALL_ON_PAGE,
  apiSeenDigest,
  approvalSummary,
  decisionCard,
  factLabel,
  pageDigest,
  previewJson,
  previewTable,
  STATUS_TEXT,
  statusLine,
  votesList,
  withdrawnNote,
} from './approval-view.js';
export {
  type EffectPreview,
  effectPreview,
  PREVIEW_LIMITS,
  type PreviewRow,
  previewLines,
} from './effect-preview.js';
export { BodyError } from './http-bits.js';
export { answerPageFailure } from './page-failure.js';
