// subscriptions/listen: a long-lived stream of the notifications a client opted in to (basic/patterns/subscriptions.mdx).
// The catalog's change signal for this caller becomes notifications/{tools,prompts,resources}/list_changed, and the
// caller's own tasks' changes become notifications/tasks (the tasks extension), each tagged with the subscription's id.
// Only a catalog that can change (`watch`) agrees to list changes; resource updates are never agreed (nothing here
// tells of them), so the acknowledgement leaves them out, as the spec asks.
import {
  declaresTasks,
  ErrorCode,
  type JsonObject,
  McpError,
  META_SUBSCRIPTION_ID,
  type Result,
  TASKS_REQUIRED_DATA,
} from '../../protocol/index.js';
import type { CatalogKind, CatalogOffer } from '../catalog/catalog.js';
import type { MaybePromise } from '../maybe-async.js';
import type { Call, Core } from './method.js';

/** The filter fields for list changes, and the kind of list each names. */
const LIST_FILTERS: ReadonlyArray<readonly [field: string, kind: CatalogKind]> = [
  ['toolsListChanged', 'tools'],
  ['promptsListChanged', 'prompts'],
  ['resourcesListChanged', 'resources'],
];

/** Tasks one stream may follow: enough for any client's work in flight, a bound on what one request can hold. */
const MAX_TASK_IDS = 100;

export function subscriptionsListen(core: Core, call: Call): MaybePromise<Result> {
  const taskIds = (call.params.notifications as JsonObject).taskIds;
  if (taskIds !== undefined) checkTaskIds(core, call, taskIds);
  const offer = core.catalog.offers(call.env);
  return offer instanceof Promise ? offer.then((o) => listen(core, call, o)) : listen(core, call, offer);
}

function checkTaskIds(core: Core, call: Call, taskIds: unknown): void {
  if (!declaresTasks(call.meta.clientCapabilities))
    throw new McpError(
      ErrorCode.MissingRequiredClientCapability,
      'Missing required client capability: notifications for taskIds need the io.modelcontextprotocol/tasks extension declared on the request',
      TASKS_REQUIRED_DATA,
    );
  if (!core.tasks) throw new McpError(ErrorCode.InvalidParams, 'Invalid params: this server offers no tasks');
  if (!Array.isArray(taskIds) || taskIds.length > MAX_TASK_IDS)
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid params: notifications.taskIds must be an array of at most ${MAX_TASK_IDS} task ids`,
    );
}

async function listen(core: Core, call: Call, offer: CatalogOffer): Promise<Result> {
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
  const stops: Array<() => void> = [];
  if (Array.isArray(requested.taskIds) && core.tasks) {
    const followed = await core.tasks.watch(requested.taskIds, env.principal, (task) =>
      env.notify({ jsonrpc: '2.0', method: 'notifications/tasks', params: { ...task, _meta: { ...tag } } }),
    );
    stops.push(followed.stop);
    agreed.taskIds = followed.agreed;
  }
  // The first message of the subscription, before any notification on it.
  env.notify({
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: tag, notifications: agreed },
  });
  // The graceful end: the answer to the listen request (the dispatcher adds serverInfo beside the id).
  const ended = (): Result => {
    for (const stop of stops) stop();
    return { resultType: 'complete', _meta: { ...tag } };
  };
  if (watch && kinds.size > 0)
    stops.push(
      watch(env, (kind) => {
        if (kinds.has(kind))
          env.notify({
            jsonrpc: '2.0',
            method: `notifications/${kind}/list_changed`,
            params: { _meta: tag },
          });
      }),
    );
  // Nothing agreed, nothing will ever come: end now rather than hold a connection open.
  if (stops.length === 0 || (kinds.size === 0 && (agreed.taskIds as string[] | undefined)?.length === 0)) {
    return ended();
  }
  return new Promise<Result>((resolve) => {
    // The client went away (nobody reads the answer) or the transport is closing (the answer ends the stream).
    const end = () => {
      env.signal.removeEventListener('abort', end);
      env.closing?.removeEventListener('abort', end);
      resolve(ended());
    };
    if (env.signal.aborted || env.closing?.aborted) return end();
    env.signal.addEventListener('abort', end);
    env.closing?.addEventListener('abort', end);
  });
}
