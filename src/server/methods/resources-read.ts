// resources/read: find the resource or template, run it through the round pipeline, set its cache hints.
import { invalidParams, type Result } from '../../protocol/index.js';
import type { FoundResource } from '../catalog/entries.js';
import type { MaybePromise } from '../maybe-async.js';
import type { Call, Core } from './method.js';

/** Template matching is a regular expression: its input is bounded before it runs. */
const MAX_URI_LENGTH = 8192;

export function resourcesRead(core: Core, call: Call): MaybePromise<Result> {
  const uri = call.params.uri as string;
  if (uri.length > MAX_URI_LENGTH)
    throw invalidParams(`Invalid params: uri is longer than ${MAX_URI_LENGTH} characters`);
  const lookup = core.catalog.findResource(uri, call.env);
  return lookup instanceof Promise
    ? lookup.then((found) => readResource(core, call, uri, found))
    : readResource(core, call, uri, lookup);
}

/** A resource hidden from this caller is not found either: the same error as for an unknown URI. */
function readResource(
  core: Core,
  call: Call,
  uri: string,
  found: FoundResource | undefined,
): MaybePromise<Result> {
  if (!found) throw invalidParams('Resource not found', { uri });
  // Answers without a state (unsealedAnswers) shape the result as much as sealed ones do.
  const retried = call.params.requestState !== undefined || call.params.inputResponses !== undefined;
  const withCacheHints = (r: Result): Result => {
    if (r.resultType === 'complete') {
      // A result reached through MRTR rounds depends on answers outside the cache key: never cacheable.
      r.ttlMs = retried ? 0 : core.listTtlMs;
      r.cacheScope =
        retried || call.env.principal !== undefined || !core.catalog.sameForEveryone ? 'private' : 'public';
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
