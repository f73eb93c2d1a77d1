// Lent to the other rooms of mrtr, not public API (mrtr/controls is index.ts): what the console shows of an
// approval request, drawn the way the review page draws it, so a vote is for the same facts on every surface; what
// a page answers when it failed, the same on the console as on the controls' pages; and the hold of a check waiting
// for a person, which the connections' ask shares with step-up.

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
export { NO_SIGN_IN } from './errors.js';
export { FleetWakeups } from './fleet-wakeups.js';
export { BodyError, seeOther } from './http-bits.js';
export { judged } from './judged.js';
export { answerPageFailure } from './page-failure.js';
export { cameBack, gaveUp, heldForPerson, Wakeups } from './wakeups.js';
