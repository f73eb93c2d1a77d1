// mrtr/controls: human controls for tool authors — consent bound to the effect, step-up (TOTP) through the server's
// own page, four-eyes approval with an inbox and a JSON API.

export type { ApprovalGrant, ApprovalOptions } from './approval.js';
export {
  type ApprovalRecord,
  ApprovalRefused,
  type ApprovalRisk,
  type ApprovalState,
  type Person,
  type Vote,
} from './approval-book.js';
export type { Consent, ConsentOptions } from './consent.js';
export type { ControlContext, ControlEvent, ControlHost, ControlPages, ControlPrincipal } from './context.js';
export { CONTROLS_DEFAULTS } from './defaults.js';
export { type Effect, effectDigest } from './effect.js';
export { ControlsUsageError } from './errors.js';
export { HumanControls, type HumanControlsOptions } from './human-controls.js';
export type { StepUpOptions } from './step-up.js';
export { type CodeCheck, TotpCheck, type TotpCheckOptions } from './totp-check.js';
export { enrolTotp, type TotpSecrets, totpSecretsFile } from './totp-secrets.js';
