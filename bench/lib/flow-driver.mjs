// A client that drives any MRTR tools/call to its end, the way the curves bench (lib/curves.mjs) needs it: while the
// result is input_required, answer every question asked, and send the call again with the same arguments and the
// requestState exactly as received. It knows nothing of the tool, so the n-question tool and approve_change (with
// arguments of any size) go through the same code, and every flow's final text is checked.
import { CheckError, callHeaders, parseRpcResponse, REQUEST_META } from './mcp.mjs';

const clip = (s, n = 80) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** A value fitting one property of a form's requestedSchema: yes, the first choice, the smallest number, a word. */
function fieldValue(schema) {
  if (Array.isArray(schema?.enum) && schema.enum.length) return schema.enum[0];
  if (Array.isArray(schema?.oneOf) && schema.oneOf.length) return schema.oneOf[0].const;
  switch (schema?.type) {
    case 'boolean':
      return true;
    case 'number':
    case 'integer':
      return schema.minimum ?? 1;
    default:
      return 'y'.repeat(Math.max(1, schema?.minLength ?? 1));
  }
}

/** Accept every form question with content for each of its properties; anything else is not something we answer. */
export function answerAll(inputRequests) {
  const responses = {};
  for (const [key, request] of Object.entries(inputRequests ?? {})) {
    if (request?.method !== 'elicitation/create' || (request.params?.mode ?? 'form') !== 'form')
      throw new CheckError(
        'shape',
        `input request ${key} is ${request?.method} (${request?.params?.mode}), not a form`,
      );
    const content = {};
    for (const [field, schema] of Object.entries(request.params.requestedSchema?.properties ?? {}))
      content[field] = fieldValue(schema);
    responses[key] = { action: 'accept', content };
  }
  if (!Object.keys(responses).length) throw new CheckError('shape', 'input_required with no input requests');
  return responses;
}

/**
 * Build a driver for one tool. `run(args, expectText)` completes one flow and returns how many rounds it took.
 * @param {object} o
 * @param {(headers, body) => Promise<{status, contentType, text}>} o.post
 * @param {string} o.tool
 * @param {number} o.maxRounds  a flow still asking after this many rounds is an error (a tool that loops)
 * @param {Record<string, string>} [o.extraHeaders]  e.g. the Authorization header of a server with auth
 */
export function createFlowDriver({ post, tool, maxRounds, extraHeaders }) {
  // One frozen object for every request: the raw client caches its header block by identity.
  const headers = extraHeaders ? Object.freeze({ ...callHeaders(tool), ...extraHeaders }) : callHeaders(tool);
  let nextId = 1;
  return async function run(args, expectText) {
    // The arguments are the same every round: serialize them once (they can be 100 KB).
    const argsJson = JSON.stringify(args);
    let answers;
    for (let round = 1; round <= maxRounds; round++) {
      const id = nextId++;
      const params = `{"name":${JSON.stringify(tool)},"arguments":${argsJson}${answers ?? ''},"_meta":${META_JSON}}`;
      const m = parseRpcResponse(
        await post(headers, `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}`),
        id,
      );
      const r = m.result;
      if (r.resultType === 'input_required') {
        if (typeof r.requestState !== 'string')
          throw new CheckError('shape', `round ${round}: input_required without a string requestState`);
        answers = `,"inputResponses":${JSON.stringify(answerAll(r.inputRequests))},"requestState":${JSON.stringify(r.requestState)}`;
        continue;
      }
      if (r.resultType !== undefined && r.resultType !== 'complete')
        throw new CheckError('shape', `round ${round}: resultType ${JSON.stringify(r.resultType)}`);
      const text = r.content?.[0]?.text;
      if (r.isError === true || text !== expectText)
        throw new CheckError(
          'shape',
          `round ${round}: text ${JSON.stringify(clip(String(text)))}, want ${JSON.stringify(clip(expectText))}`,
        );
      return round;
    }
    throw new CheckError('shape', `still input_required after ${maxRounds} rounds`);
  };
}

const META_JSON = JSON.stringify(REQUEST_META);
