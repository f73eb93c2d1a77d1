// resources/read: find the resource or template, run it through the round pipeline, set its cache hints.
import { invalidParams, type Result } from '../../protocol/index.js';
import type { MaybePromise } from '../maybe-async.js';
import type { Call, Core } from './method.js';

/** Template matching is a regular expression: its input is bounded before it runs. */
const MAX_URI_LENGTH = 8192;

export function resourcesRead(core: Core, call: Call): MaybePromise<Result> {
  const uri = call.params.uri as string;
  if (uri.length > MAX_URI_LENGTH)
    throw invalidParams(`Invalid params: uri is longer than ${MAX_URI_LENGTH} characters`);
  const found = core.registry.findResource(uri);
  if (!found) throw invalidParams('Resource not found', { uri });
  // Answers without a state (unsealedAnswers) shape the result as much as sealed ones do.
  const retried = call.params.requestState !== undefined || call.params.inputResponses !== undefined;
  const withCacheHints = (r: Result): Result => {
    if (r.resultType === 'complete') {
      // A result reached through MRTR rounds depends on answers outside the cache key: never cacheable.
      r.ttlMs = retried ? 0 : core.listTtlMs;
      r.cacheScope = retried || call.env.principal !== undefined ? 'private' : 'public';
    }
    return r;
  };
  // A resource's state binds its URI only: its request carries no arguments.
  return core.rounds.round(call, 'resources/read', {
    target: uri,
    arguments: null,
    options: found.mrtr,
    invoke: (ctx) => found.handler(uri, ctx, found.variables),
    finalize: withCacheHints,
  });
}
