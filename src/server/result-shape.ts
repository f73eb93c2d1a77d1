// The development check that a result matches the official schema (validateResults). One function for the
// dispatcher and the round pipeline: MRTR results are checked before guards commit them, others before sending.
import { describeSchemaErrors, RESULT_DEFINITION, type Result, schemaValidator } from '../protocol/index.js';
import { handlerContractError } from './errors.js';

export function checkResultShape(method: string, result: Result): void {
  // A CreateTaskResult (the tasks extension) and the tasks methods' results have no definition in schema.json.
  if ((result.resultType as string) === 'task' || RESULT_DEFINITION[method] === undefined) return;
  const definition =
    result.resultType === 'input_required' ? 'InputRequiredResult' : RESULT_DEFINITION[method]!;
  const validate = schemaValidator(definition);
  if (!validate(result)) {
    throw handlerContractError(
      `result of ${method} does not match ${definition}: ${describeSchemaErrors(validate)}`,
    );
  }
}
