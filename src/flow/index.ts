export {
  type Ask,
  type Elicited,
  FlowEnded,
  type FlowInputKind,
  type QuestionOptions,
} from './ask.js';
export { FlowUsageError } from './errors.js';
export { type ElicitationForm, elicitationForm, type FormSchema } from './forms.js';
export { type FlowJournal, isFlowJournal } from './journal.js';
export {
  FLOW_DEFAULTS,
  type FlowRoundInput,
  type FlowRoundOutcome,
  runFlowRound,
  type StepLedger,
} from './run.js';
