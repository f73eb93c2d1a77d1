export { type Ask, type Elicited, FlowEnded, type FlowInputKind, type QuestionOptions } from './ask.js';
export { FLOW_DEFAULTS } from './defaults.js';
export { FlowUsageError } from './errors.js';
export { type ElicitationForm, elicitationForm, type FormSchema } from './forms.js';
export type { ForwardedResponse, ForwardOptions } from './forward.js';
export type { StepLedger } from './run.js';
