// tools/list, prompts/list, resources/list and resources/templates/list: one page each, with cache hints.
import type { Result } from '../../protocol/index.js';
import { paginate } from '../pagination.js';
import type { Call, Core } from './method.js';

function listPage<T extends { definition: unknown }>(
  core: Core,
  call: Call,
  field: string,
  items: readonly T[],
): Result {
  const { page, nextCursor } = paginate(items, call.params.cursor, core.pageSize);
  const result: Result = {
    resultType: 'complete',
    [field]: page.map((item) => item.definition),
    ttlMs: core.listTtlMs,
    cacheScope: 'public',
  };
  if (nextCursor !== undefined) result.nextCursor = nextCursor;
  return result;
}

export const toolsList = (core: Core, call: Call): Result =>
  listPage(core, call, 'tools', [...core.registry.tools.values()]);
export const promptsList = (core: Core, call: Call): Result =>
  listPage(core, call, 'prompts', [...core.registry.prompts.values()]);
export const resourcesList = (core: Core, call: Call): Result =>
  listPage(core, call, 'resources', [...core.registry.resources.values()]);
export const resourceTemplatesList = (core: Core, call: Call): Result =>
  listPage(core, call, 'resourceTemplates', core.registry.templates);
