// The wire contract of the two-round `approve_change` flow (MCP 2026-07-28
// MRTR): request builders, response parsing and checks.
//
// Round 1: tools/call approve_change {change}            -> input_required
//          with inputRequests.confirm = form elicitation for {approve: boolean}
//          and a server-minted requestState string.
// Round 2: same tools/call + inputResponses.confirm (accept, {approve: true})
//          + the byte-exact requestState                -> complete, text
//          content exactly `approved <change>`.

export const PROTOCOL_VERSION = '2026-07-28';
export const TOOL = 'approve_change';

/** Per-request `_meta` every 2026-07-28 request must carry (basic/index.mdx). */
export const REQUEST_META = Object.freeze({
  'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'mrtr-bench', version: '0.1.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
});

/** Streamable HTTP headers for a tools/call (transports/streamable-http.mdx). */
export const TOOLS_CALL_HEADERS = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': PROTOCOL_VERSION,
  'mcp-method': 'tools/call',
  'mcp-name': TOOL,
});

export const CONFIRM_ANSWER = Object.freeze({ action: 'accept', content: { approve: true } });

export function round1Body(id, change) {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: TOOL, arguments: { change }, _meta: REQUEST_META },
  });
}

export function round2Body(id, change, requestState, answer = CONFIRM_ANSWER) {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: TOOL,
      arguments: { change },
      inputResponses: { confirm: answer },
      requestState,
      _meta: REQUEST_META,
    },
  });
}

export class CheckError extends Error {
  constructor(kind, message, sample) {
    super(message);
    this.kind = kind; // 'status' | 'content-type' | 'parse' | 'jsonrpc' | 'shape' | 'network'
    this.sample = sample;
  }
}

const clip = (s, n = 300) => (typeof s === 'string' && s.length > n ? `${s.slice(0, n)}…` : s);

/**
 * Turn an HTTP response into the JSON-RPC response message for `id`.
 * Handles both `application/json` and `text/event-stream` bodies.
 */
export function parseRpcResponse(res, id) {
  if (res.status !== 200) throw new CheckError('status', `HTTP ${res.status}`, clip(res.text));
  let msg;
  const ct = res.contentType.toLowerCase();
  if (ct.startsWith('application/json')) {
    try {
      msg = JSON.parse(res.text);
    } catch {
      throw new CheckError('parse', 'response body is not JSON', clip(res.text));
    }
  } else if (ct.startsWith('text/event-stream')) {
    msg = findSseResponse(res.text, id);
    if (!msg)
      throw new CheckError('parse', `SSE stream without a JSON-RPC response for id ${id}`, clip(res.text));
  } else {
    throw new CheckError('content-type', `unexpected Content-Type "${res.contentType}"`, clip(res.text));
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg))
    throw new CheckError('jsonrpc', 'response is not a JSON object', clip(res.text));
  if (msg.jsonrpc !== '2.0')
    throw new CheckError('jsonrpc', `jsonrpc is ${JSON.stringify(msg.jsonrpc)}, want "2.0"`, clip(res.text));
  if (msg.id !== id)
    throw new CheckError(
      'jsonrpc',
      `response id ${JSON.stringify(msg.id)} != request id ${JSON.stringify(id)}`,
      clip(res.text),
    );
  if (msg.error)
    throw new CheckError('jsonrpc', `JSON-RPC error ${msg.error.code}: ${msg.error.message}`, clip(res.text));
  if (!msg.result || typeof msg.result !== 'object')
    throw new CheckError('jsonrpc', 'response has no result object', clip(res.text));
  return msg;
}

function findSseResponse(text, id) {
  // Events are separated by a blank line; data lines of one event are joined by \n.
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(l.charAt(5) === ' ' ? 6 : 5))
      .join('\n');
    if (!data) continue;
    try {
      const m = JSON.parse(data);
      if (m && m.id === id && ('result' in m || 'error' in m)) return m;
    } catch {
      /* not JSON: ignore this event */
    }
  }
  return undefined;
}

/** Fast per-response check for round 1; returns the requestState. */
export function checkRound1(msg) {
  const r = msg.result;
  if (r.resultType !== 'input_required')
    throw new CheckError(
      'shape',
      `round 1 resultType ${JSON.stringify(r.resultType)}, want "input_required"`,
    );
  if (typeof r.requestState !== 'string') throw new CheckError('shape', 'round 1 has no string requestState');
  const c = r.inputRequests?.confirm;
  if (c?.method !== 'elicitation/create')
    throw new CheckError('shape', 'round 1 inputRequests.confirm is not an elicitation/create request');
  return r.requestState;
}

/** Fast per-response check for round 2. */
export function checkRound2(msg, change) {
  const r = msg.result;
  if (r.resultType !== undefined && r.resultType !== 'complete')
    throw new CheckError('shape', `round 2 resultType ${JSON.stringify(r.resultType)}, want "complete"`);
  const text = r.content?.[0]?.text;
  if (r.isError === true || text !== `approved ${change}`)
    throw new CheckError(
      'shape',
      `round 2 text ${JSON.stringify(clip(String(text), 80))}, want "approved ${change}"`,
    );
}

// ---- The gateway rows: a one-round pass-through call of the example server's `echo` tool, under the name the
// server at hand gives it (`echo` on the upstream, `up__echo` through the gateway).

/** The headers of a call of `tool` (one object per tool: the raw client caches header blocks by identity). */
export function callHeaders(tool) {
  return Object.freeze({ ...TOOLS_CALL_HEADERS, 'mcp-name': tool });
}

export function echoBody(id, tool, message) {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: tool, arguments: { message }, _meta: REQUEST_META },
  });
}

/** The echo came back whole, in one round. */
export function checkEcho(msg, message) {
  const r = msg.result;
  if (r.resultType !== undefined && r.resultType !== 'complete')
    throw new CheckError('shape', `echo resultType ${JSON.stringify(r.resultType)}, want "complete"`);
  const text = r.content?.[0]?.text;
  if (r.isError === true || text !== message)
    throw new CheckError('shape', `echo text ${JSON.stringify(clip(String(text), 80))}, want "${message}"`);
}

/** Check for the bare responder: any 200 JSON-RPC result. */
export function checkBare(msg) {
  if (!msg.result) throw new CheckError('shape', 'bare response has no result');
}

/**
 * Strict, one-off contract check run before the load phase. Returns a list
 * of human-readable deviations (empty = conforms) plus informational notes.
 */
export async function probeContract(post) {
  const problems = [];
  const notes = [];
  const change = 'probe-change-1';
  let state;

  // Round 1
  try {
    const res = await post(TOOLS_CALL_HEADERS, round1Body('probe-1', change));
    const msg = parseRpcResponse(res, 'probe-1');
    const r = msg.result;
    if (r.resultType !== 'input_required')
      problems.push(
        `round 1: result.resultType is ${JSON.stringify(r.resultType)}, spec wants "input_required"`,
      );
    if (typeof r.requestState !== 'string' || r.requestState.length === 0)
      problems.push(`round 1: result.requestState is ${typeof r.requestState}, want a non-empty string`);
    else state = r.requestState;
    const reqs = r.inputRequests;
    if (!reqs || typeof reqs !== 'object')
      problems.push('round 1: result.inputRequests missing or not an object');
    else {
      const keys = Object.keys(reqs);
      if (keys.length !== 1 || keys[0] !== 'confirm')
        notes.push(`round 1: inputRequests keys are ${JSON.stringify(keys)} (contract: exactly ["confirm"])`);
      const c = reqs.confirm;
      if (!c) problems.push('round 1: inputRequests.confirm missing');
      else {
        if (c.method !== 'elicitation/create')
          problems.push(
            `round 1: inputRequests.confirm.method is ${JSON.stringify(c.method)}, want "elicitation/create"`,
          );
        const p = c.params ?? {};
        if (p.mode !== undefined && p.mode !== 'form')
          problems.push(`round 1: confirm.params.mode is ${JSON.stringify(p.mode)}, want "form" (or absent)`);
        if (typeof p.message !== 'string') problems.push('round 1: confirm.params.message is not a string');
        const s = p.requestedSchema;
        if (s?.type !== 'object')
          problems.push('round 1: confirm.params.requestedSchema.type is not "object"');
        else {
          if (s.properties?.approve?.type !== 'boolean')
            problems.push(
              `round 1: requestedSchema.properties.approve.type is ${JSON.stringify(s.properties?.approve?.type)}, want "boolean"`,
            );
          if (!Array.isArray(s.required) || !s.required.includes('approve'))
            problems.push(
              `round 1: requestedSchema.required is ${JSON.stringify(s.required)}, want it to include "approve"`,
            );
        }
        if ('id' in c || 'jsonrpc' in c)
          notes.push(
            'round 1: confirm entry carries JSON-RPC envelope fields (id/jsonrpc); spec shape is {method, params}',
          );
      }
    }
    if ('content' in r) notes.push('round 1: input_required result also carries `content`');
  } catch (e) {
    problems.push(`round 1: ${e.message}${e.sample ? ` — body: ${e.sample}` : ''}`);
  }

  if (state !== undefined) {
    // Round 2 (the happy path)
    try {
      const res = await post(TOOLS_CALL_HEADERS, round2Body('probe-2', change, state));
      const msg = parseRpcResponse(res, 'probe-2');
      const r = msg.result;
      if (r.resultType !== 'complete')
        problems.push(`round 2: result.resultType is ${JSON.stringify(r.resultType)}, spec wants "complete"`);
      const content = r.content;
      if (!Array.isArray(content) || content.length === 0)
        problems.push('round 2: result.content is not a non-empty array');
      else {
        if (content[0].type !== 'text')
          problems.push(`round 2: content[0].type is ${JSON.stringify(content[0].type)}, want "text"`);
        if (content[0].text !== `approved ${change}`)
          problems.push(
            `round 2: content[0].text is ${JSON.stringify(content[0].text)}, want "approved ${change}"`,
          );
      }
      if (r.isError) problems.push('round 2: result.isError is true');
    } catch (e) {
      problems.push(`round 2: ${e.message}${e.sample ? ` — body: ${e.sample}` : ''}`);
    }

    // Tampered state must not complete the flow (the server verifies the state).
    try {
      const flipped = state.slice(0, -2) + (state.at(-2) === 'A' ? 'B' : 'A') + state.at(-1);
      const res = await post(TOOLS_CALL_HEADERS, round2Body('probe-3', change, flipped));
      let approved = false;
      try {
        const msg = parseRpcResponse(res, 'probe-3');
        approved = msg.result?.content?.[0]?.text === `approved ${change}`;
      } catch {
        /* an error is the expected outcome */
      }
      if (approved)
        problems.push(
          'tampered requestState (one character changed) still completed the flow: state is not verified',
        );
      else notes.push(`tampered requestState rejected (HTTP ${res.status})`);
    } catch (e) {
      notes.push(`tampered-state probe: ${e.message}`);
    }

    // State minted for one change replayed with different arguments (informational).
    try {
      const res = await post(TOOLS_CALL_HEADERS, round2Body('probe-4', 'other-change', state));
      let approved = false;
      try {
        const msg = parseRpcResponse(res, 'probe-4');
        approved = msg.result?.content?.[0]?.text === 'approved other-change';
      } catch {
        /* rejection is fine */
      }
      notes.push(
        approved
          ? 'state minted for change A approved change B (state not bound to arguments)'
          : 'state is bound to the arguments (replay on other args refused)',
      );
    } catch (e) {
      notes.push(`arg-binding probe: ${e.message}`);
    }
  }
  return { problems, notes };
}
