// subscriptions/listen: a long-lived stream of the list changes a client opted in to (basic/patterns/subscriptions.mdx).
// The catalog's change signal for this caller becomes notifications/{tools,prompts,resources}/list_changed, each
// tagged with the subscription's id. Only a catalog that can change (`watch`) agrees to any; resource updates are
// never agreed (nothing here tells of them), so the acknowledgement leaves them out, as the spec asks.
import { type JsonObject, META_SUBSCRIPTION_ID, type Result } from '../../protocol/index.js';
import type { CatalogKind, CatalogOffer } from '../catalog/catalog.js';
import type { MaybePromise } from '../maybe-async.js';
import type { Call, Core } from './method.js';

/** The filter fields for list changes, and the kind of list each names. */
const LIST_FILTERS: ReadonlyArray<readonly [field: string, kind: CatalogKind]> = [
  ['toolsListChanged', 'tools'],
  ['promptsListChanged', 'prompts'],
  ['resourcesListChanged', 'resources'],
];

export function subscriptionsListen(core: Core, call: Call): MaybePromise<Result> {
  const offer = core.catalog.offers(call.env);
  return offer instanceof Promise ? offer.then((o) => listen(core, call, o)) : listen(core, call, offer);
}

function listen(core: Core, call: Call, offer: CatalogOffer): MaybePromise<Result> {
  const { env } = call;
  const tag: JsonObject = { [META_SUBSCRIPTION_ID]: call.request.id };
  const requested = call.params.notifications as JsonObject;
  const watch = core.catalog.watch?.bind(core.catalog);
  const agreed: JsonObject = {};
  const kinds = new Set<CatalogKind>();
  for (const [field, kind] of LIST_FILTERS) {
    if (watch && requested[field] === true && offer[kind]) {
      agreed[field] = true;
      kinds.add(kind);
    }
  }
  // The first message of the subscription, before any notification on it.
  env.notify({
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: tag, notifications: agreed },
  });
  // The graceful end: the answer to the listen request (the dispatcher adds serverInfo beside the id).
  const ended = (): Result => ({ resultType: 'complete', _meta: { ...tag } });
  // Nothing agreed, nothing will ever come: end now rather than hold a connection open.
  if (!watch || kinds.size === 0) return ended();
  return new Promise<Result>((resolve) => {
    const stop = watch(env, (kind) => {
      if (kinds.has(kind))
        env.notify({ jsonrpc: '2.0', method: `notifications/${kind}/list_changed`, params: { _meta: tag } });
    });
    // The client went away (nobody reads the answer) or the transport is closing (the answer ends the stream).
    const end = () => {
      env.signal.removeEventListener('abort', end);
      env.closing?.removeEventListener('abort', end);
      stop();
      resolve(ended());
    };
    if (env.signal.aborted || env.closing?.aborted) return end();
    env.signal.addEventListener('abort', end);
    env.closing?.addEventListener('abort', end);
  });
}
