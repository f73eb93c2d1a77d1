// Whether an answer is of the kind its question asked for: an elicitation gets an ElicitResult, a sampling request a
// CreateMessageResult, roots/list a ListRootsResult. A held 2025 call sends the answer to its server as the response
// to that server's request, so an answer of another kind would reach the server as a malformed result.
import {
  describeSchemaErrors,
  type InputKind,
  type InputRequest,
  kindOfInputRequest,
  schemaValidator,
} from '../protocol/index.js';

const RESULT_OF: Record<InputKind, string> = {
  'elicitation.form': 'ElicitResult',
  'elicitation.url': 'ElicitResult',
  sampling: 'CreateMessageResult',
  roots: 'ListRootsResult',
};

/** What is wrong with `answer` as the answer to `question`, as "<method> needs a <Result>: <why>", or undefined. */
export function answerKindProblem(question: InputRequest, answer: unknown): string | undefined {
  const kind = kindOfInputRequest(question);
  if (kind === undefined) return `${question.method} is not a question this client answers`;
  const validate = schemaValidator(RESULT_OF[kind]);
  if (validate(answer)) return undefined;
  return `answers ${question.method} with something that is not a ${RESULT_OF[kind]} (${describeSchemaErrors(validate)})`;
}
