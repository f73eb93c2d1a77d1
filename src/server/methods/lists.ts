// tools/list, prompts/list, resources/list and resources/templates/list: one page each of the caller's own list (a
// cursor is an offset into it, so it says nothing of entries the caller cannot see), with cache hints.
import type { Result } from '../../protocol/index.js';
import type { Catalog, CatalogCaller } from '../catalog/catalog.js';
import type { MaybePromise } from '../maybe-async.js';
import { paginate } from '../pagination.js';
import type { Call, Core } from './method.js';

function listPage<T extends { definition: unknown }>(
  core: Core,
  call: Call,
  field: string,
  items: readonly T[],
): Result {
  const kind = field === 'tools' || field === 'prompts' ? field : 'resources';
  const notice = core.catalog.listNotice?.(kind, call.env);
  const { page, nextCursor } = paginate(items, call.params.cursor, core.pageSize);
  const result: Result = {
    resultType: 'complete',
    [field]: page.map((item) => item.definition),
    // A list the catalog says is partial is not to be kept: it changes as soon as the rest answers.
    ttlMs: notice ? 0 : core.listTtlMs,
    // A list filtered per caller must not reach a shared cache (server/utilities/caching.mdx).
    cacheScope: core.catalog.sameForEveryone ? 'public' : 'private',
  };
  if (nextCursor !== undefined) result.nextCursor = nextCursor;
  if (notice) result._meta = notice;
  return result;
}

/** The method that pages over one of the catalog's lists; no promise when the catalog answers at once. */
const lister =
  (
    field: string,
    list: (catalog: Catalog, caller: CatalogCaller) => MaybePromise<readonly { definition: unknown }[]>,
  ) =>
  (core: Core, call: Call): MaybePromise<Result> => {
    const items = list(core.catalog, call.env);
    return items instanceof Promise
      ? items.then((found) => listPage(core, call, field, found))
      : listPage(core, call, field, items);
  };

export const toolsList = lister('tools', (catalog, caller) => catalog.listTools(caller));
export const promptsList = lister('prompts', (catalog, caller) => catalog.listPrompts(caller));
export const resourcesList = lister('resources', (catalog, caller) => catalog.listResources(caller));
export const resourceTemplatesList = lister('resourceTemplates', (catalog, caller) =>
  catalog.listResourceTemplates(caller),
);
