// MRTR's questions and a 2025 revision's are the same requests (elicitation/create, sampling/createMessage,
// roots/list) carried two ways: inside an input_required result, or as server-to-client requests mid-call. The
// server's bridge turns a 2026 InputRequest into a 2025 request; the client's held calls turn a 2025 request back
// into an InputRequest. Both spellings live here, so the two directions cannot drift apart.
import { kindOfInputRequest } from './input-kinds.js';
import { isJsonObject } from './json.js';
import { knowsElicitationModes } from './legacy.js';
import type { InputRequest, JsonObject } from './wire.js';

/** An input request's params as a peer of 2025 revision `version` expects them (2025-06-18 has no elicitation `mode`). */
export function legacyRequestParams(method: string, params: JsonObject, version: string): JsonObject {
  if (method === 'elicitation/create' && !knowsElicitationModes(version) && params.mode === 'form') {
    const { mode: _form, ...rest } = params;
    return rest;
  }
  return params;
}

/**
 * A 2025 server-to-client request as a 2026-07-28 InputRequest, or undefined when it asks for nothing MRTR carries
 * (ping, an unknown method or elicitation mode). A form elicitation of a revision without modes is given `mode: "form"`.
 */
export function inputRequestFromLegacy(request: {
  method: string;
  params?: unknown;
}): InputRequest | undefined {
  const params = isJsonObject(request.params) ? request.params : {};
  const kind = kindOfInputRequest({ method: request.method, params });
  if (kind === undefined) return undefined;
  const converted =
    kind === 'elicitation.form' && params.mode === undefined ? { mode: 'form', ...params } : params;
  return { method: request.method, params: converted } as unknown as InputRequest;
}
