// ask.forward: a question this flow did not write — an upstream server's InputRequest — asked of the flow's caller
// under the flow's own key (never the upstream's, which could collide), journaled and checked like any question.
import {
  type CreateMessageResult,
  describeSchemaErrors,
  type ElicitResult,
  emptyRecord,
  type InputKind,
  type InputRequest,
  type InputResponse,
  isJsonObject,
  isMcpReservedMetaKey,
  type JsonObject,
  kindOfInputRequest,
  type ListRootsResult,
  META_HUMAN_REQUIRED,
  MRTR_META_PREFIX,
  nestsDeeperThan,
  schemaValidator,
} from '../protocol/index.js';
import { FLOW_DEFAULTS } from './defaults.js';
import { FlowUsageError } from './errors.js';
import { forwardedFormCheck } from './forwarded-form.js';
import type { Question, QuestionOptions } from './question.js';

export interface ForwardOptions extends QuestionOptions {
  /**
   * Keys of the upstream's `params._meta` to relay as they are (vendor keys such as `com.example/ui`). Every other
   * key is dropped; mrtr's own hints and the keys MCP reserves cannot be named.
   */
  passMeta?: readonly string[];
  /** The largest request relayed, in bytes of JSON (default FLOW_DEFAULTS.maxForwardedBytes, 1 MiB). */
  maxBytes?: number;
}

/** What the caller's answer to a relayed request is, by the request's method. */
export type ForwardedResponse<R extends InputRequest> = R extends { method: 'elicitation/create' }
  ? ElicitResult
  : R extends { method: 'sampling/createMessage' }
    ? CreateMessageResult
    : R extends { method: 'roots/list' }
      ? ListRootsResult
      : InputResponse;

const KIND_NAME: Record<InputKind, string> = {
  'elicitation.form': 'elicitation/create (form mode)',
  'elicitation.url': 'elicitation/create (url mode)',
  sampling: 'sampling/createMessage',
  roots: 'roots/list',
};

/** Check an upstream's request and build the question that relays it; throws FlowUsageError naming what is wrong. */
export function forwardedQuestion(upstream: unknown, options: ForwardOptions): Question {
  checkOptions(options);
  const request = checkedCopy(upstream, options.maxBytes ?? FLOW_DEFAULTS.maxForwardedBytes);
  const kind = kindOfInputRequest(request);
  if (!kind)
    throw new FlowUsageError(
      'ask.forward: not an InputRequest: the method must be elicitation/create (mode form or url), ' +
        `sampling/createMessage or roots/list, got ${JSON.stringify(isJsonObject(request) ? request.method : request)}`,
    );
  checkShape(request as JsonObject, kind);
  const forwarded = withMeta(request as JsonObject, options) as unknown as InputRequest;
  if (kind !== 'elicitation.form') {
    const normalize = ANSWER_OF[kind];
    return {
      kind,
      request: forwarded,
      options,
      accept: (response) => ({ value: normalize(response) }),
      journaled: normalize,
    };
  }
  const requestedSchema = (forwarded.params as { requestedSchema: JsonObject }).requestedSchema;
  const check = forwardedFormCheck(requestedSchema);
  const fields = Object.keys(requestedSchema.properties as JsonObject);
  const answer = (response: unknown) => formAnswer(response, fields);
  return {
    kind,
    request: forwarded,
    options,
    accept(response) {
      const value = answer(response);
      const problem = value.action === 'accept' ? check(value.content) : undefined;
      return problem === undefined ? { value } : { invalid: problem };
    },
    journaled: answer,
  };
}

/**
 * A deep copy of the upstream's request, as JSON, within the bounds: later edits of the upstream's object cannot
 * change the question between its digest and the wire, and what is asked is plain JSON.
 */
function checkedCopy(upstream: unknown, maxBytes: number): unknown {
  const maxDepth = FLOW_DEFAULTS.maxForwardedDepth;
  // Depth first: stringifying or validating a request nested (or looped) without end would overflow the stack.
  if (nestsDeeperThan(upstream, maxDepth))
    throw new FlowUsageError(`ask.forward: the request nests deeper than ${maxDepth} levels`);
  let json: string | undefined;
  try {
    json = JSON.stringify(upstream);
  } catch (error) {
    throw new FlowUsageError(`ask.forward: the request is not JSON (${(error as Error).message})`);
  }
  if (json === undefined) throw new FlowUsageError('ask.forward: not an InputRequest: got nothing to relay');
  const bytes = Buffer.byteLength(json);
  if (bytes > maxBytes)
    throw new FlowUsageError(
      `ask.forward: the request is ${bytes} bytes of JSON, more than the ${maxBytes} a relayed question may be (maxBytes)`,
    );
  return JSON.parse(json);
}

function checkOptions(options: ForwardOptions): void {
  const { maxBytes, passMeta } = options;
  if (maxBytes !== undefined && !(Number.isSafeInteger(maxBytes) && maxBytes > 0))
    throw new FlowUsageError(`ask.forward: maxBytes must be a positive integer, got ${String(maxBytes)}`);
  if (passMeta !== undefined && !Array.isArray(passMeta))
    throw new FlowUsageError('ask.forward: passMeta must be an array of _meta keys');
  for (const key of passMeta ?? []) {
    if (typeof key !== 'string')
      throw new FlowUsageError('ask.forward: passMeta must list _meta keys (strings)');
    if (key.startsWith(MRTR_META_PREFIX))
      throw new FlowUsageError(
        `ask.forward: passMeta cannot relay "${key}": mrtr's own hints are this server's to set (options.humanRequired), never an upstream's`,
      );
    if (isMcpReservedMetaKey(key))
      throw new FlowUsageError(
        `ask.forward: passMeta cannot relay "${key}": MCP reserves it for the upstream's own exchange with this server`,
      );
  }
}

function checkShape(request: JsonObject, kind: InputKind): void {
  // One definition per kind, so the message names what is wrong with this kind, not the first of four branches.
  const [definition, value, where] =
    kind === 'elicitation.form'
      ? ['ElicitRequestFormParams', request.params, 'params']
      : kind === 'elicitation.url'
        ? ['ElicitRequestURLParams', request.params, 'params']
        : kind === 'sampling'
          ? ['CreateMessageRequest', request, 'request']
          : ['ListRootsRequest', request, 'request'];
  const validate = schemaValidator(definition);
  if (!validate(value))
    throw new FlowUsageError(
      `ask.forward: not a valid ${KIND_NAME[kind]} request: ${where} ${describeSchemaErrors(validate)}`,
    );
}

/**
 * The request as relayed: its method and params as the upstream wrote them, but for `_meta`. An upstream's `_meta`
 * is addressed to its peer, this server, not to our caller: mrtr's own hints there would be the upstream speaking
 * for this server (a false "second factor" on a phishing form), MCP's reserved keys describe the upstream's exchange
 * (its progress token, its trace), and a vendor key means what that vendor says. So none passes unless the
 * forwarding code names it (passMeta, vendor keys only); the hint comes from options.humanRequired alone.
 */
function withMeta(request: JsonObject, options: ForwardOptions): JsonObject {
  const params = isJsonObject(request.params) ? { ...request.params } : undefined;
  const upstreamMeta = params?._meta;
  if (params) delete params._meta;
  if (params && request.method === 'sampling/createMessage') {
    // Context from the caller's servers must not travel to an untrusted upstream ("thisServer", relayed, would mean
    // this one), and tools ask for a client capability (sampling.tools) this relay does not check: neither passes.
    if (params.tools !== undefined || params.toolChoice !== undefined)
      throw new FlowUsageError('ask.forward: a sampling request with tools cannot be relayed');
    if (params.includeContext !== undefined && params.includeContext !== 'none') delete params.includeContext;
  }
  const meta = emptyRecord<unknown>();
  if (isJsonObject(upstreamMeta))
    for (const key of options.passMeta ?? [])
      if (Object.hasOwn(upstreamMeta, key)) meta[key] = upstreamMeta[key];
  if (options.humanRequired) meta[META_HUMAN_REQUIRED] = options.humanRequired;
  const hasMeta = Object.keys(meta).length > 0;
  if (!params && !hasMeta) return { method: request.method };
  return { method: request.method, params: hasMeta ? { ...params, _meta: { ...meta } } : { ...params } };
}

/**
 * What the caller's answer is, as the handler sees it and the journal keeps it: the members its kind defines, and
 * nothing a client added (`_meta`, extra fields), so a replayed answer equals the one first given.
 */
const ANSWER_OF: Record<Exclude<InputKind, 'elicitation.form'>, (response: unknown) => InputResponse> = {
  // URL mode: the person reports completion; there is no content to relay (elicitation.mdx).
  'elicitation.url': (response) => ({ action: (response as ElicitResult).action }),
  sampling: (response) => {
    const { role, content, model, stopReason } = response as CreateMessageResult;
    return stopReason === undefined ? { role, content, model } : { role, content, model, stopReason };
  },
  roots: (response) => ({
    roots: (response as ListRootsResult).roots.map(({ uri, name }) =>
      name === undefined ? { uri } : { uri, name },
    ),
  }),
};

/** A form's answer: decline and cancel carry nothing; an accepted one only the form's own fields. */
function formAnswer(response: unknown, fields: readonly string[]): ElicitResult {
  const r = response as ElicitResult;
  if (r.action !== 'accept') return { action: r.action };
  if (!isJsonObject(r.content)) return { action: 'accept' };
  // Field names are the upstream's: `__proto__` or `constructor` stay fields, not Object's members.
  const content = emptyRecord<string | number | boolean | string[]>();
  for (const field of fields)
    if (Object.hasOwn(r.content, field))
      content[field] = r.content[field] as string | number | boolean | string[];
  return { action: 'accept', content };
}
