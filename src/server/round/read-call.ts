// The front checks every request passes, in one place for the dispatcher and the round runner: a method answered
// here, arguments, answers and `_meta` no deeper than every later step can bear, `_meta` read, and (where the
// dispatcher serves) the params checked against the schema.
import {
  describeSchemaErrors,
  ErrorCode,
  invalidParams,
  type JsonRpcRequest,
  McpError,
  REQUEST_DEFINITION,
  schemaValidator,
} from '../../protocol/index.js';
import type { RequestEnvironment } from '../environment.js';
import { checkInputBounds } from '../input-bounds.js';
import { readRequestMeta } from '../request-meta.js';
import type { Call } from './round.js';
import type { RoundSpan } from './round-span.js';
import type { RoundTrace } from './trace.js';

export interface CallFront {
  /** The methods answered here; any other is refused with -32601 and `notFound`'s message. */
  methods: ReadonlySet<string>;
  notFound: (method: string) => string;
  /** How deep arguments, answers and `_meta` may nest. */
  maxInputDepth: number;
  /** Check the params against the request's schema definition (the dispatcher does; the round runner does not). */
  validate: boolean;
}

/** The request as a Call, once it passed the front checks. Throws what the client is told. */
export function readCall(
  request: JsonRpcRequest,
  env: RequestEnvironment,
  trace: RoundTrace | undefined,
  front: CallFront,
  span?: RoundSpan,
): Call {
  if (!front.methods.has(request.method))
    throw new McpError(ErrorCode.MethodNotFound, front.notFound(request.method));
  // Before anything reads them: arguments, answers and `_meta` nest no deeper than every later step can bear.
  checkInputBounds(request.params, front.maxInputDepth);
  const meta = readRequestMeta(request.params);
  if (front.validate) validateRequest(request);
  return { request, params: request.params ?? {}, meta, env, trace, span };
}

function validateRequest(request: JsonRpcRequest): void {
  const definition = REQUEST_DEFINITION[request.method];
  // The tasks extension's methods are not in schema.json: the task service checks their params itself.
  if (definition === undefined) return;
  const validate = schemaValidator(definition);
  const params = request.params ?? {};
  // inputResponses is checked key by key against what was asked (round/state.ts), so unknown keys can be ignored.
  let subject: unknown = request;
  if ('inputResponses' in params) {
    const { inputResponses: _ignored, ...rest } = params;
    subject = { ...request, params: rest };
  }
  if (!validate(subject)) {
    throw invalidParams(`Invalid params: ${describeSchemaErrors(validate).replace(/^params\//, '')}`);
  }
}
