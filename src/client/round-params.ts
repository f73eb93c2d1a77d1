// What one MRTR round sends: the call's own params, this round's inputResponses, and the requestState exactly as the
// server gave it. The driver builds every round of a call with it; McpClient.round() builds the one round it is given.
import type { InputResponses, JsonObject } from '../protocol/index.js';

export function roundParams(
  base: JsonObject,
  inputResponses: InputResponses | JsonObject | undefined,
  requestState: string | undefined,
): JsonObject {
  const params: JsonObject = { ...base };
  // A round carries only its own answers and state, never ones left in the call's params.
  delete params.inputResponses;
  delete params.requestState;
  if (inputResponses !== undefined) params.inputResponses = inputResponses as JsonObject;
  if (requestState !== undefined) params.requestState = requestState;
  return params;
}
