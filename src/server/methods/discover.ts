// server/discover: the versions and capabilities this server offers (basic/lifecycle.mdx), as this caller sees them.
import {
  type Result,
  type ServerCapabilities,
  SUPPORTED_PROTOCOL_VERSIONS,
  TASKS_EXTENSION,
} from '../../protocol/index.js';
import type { CatalogOffer } from '../catalog/catalog.js';
import type { MaybePromise } from '../maybe-async.js';
import type { Call, Core } from './method.js';

/**
 * The capabilities for one caller's offer. `listChanged` only when the catalog can change: subscriptions/listen then
 * tells listeners (basic/patterns/subscriptions.mdx).
 */
function serverCapabilities(offer: CatalogOffer, canChange: boolean, tasks: boolean): ServerCapabilities {
  const kind = () => (canChange ? { listChanged: true } : {});
  const caps: ServerCapabilities = {};
  if (offer.tools) caps.tools = kind();
  if (offer.prompts) caps.prompts = kind();
  if (offer.resources) caps.resources = kind();
  if (offer.completions) caps.completions = {};
  caps.logging = {};
  if (tasks) caps.extensions = { [TASKS_EXTENSION]: {} };
  return caps;
}

export function serverDiscover(core: Core, call: Call): MaybePromise<Result> {
  const offer = core.catalog.offers(call.env);
  return offer instanceof Promise ? offer.then((o) => discovered(core, o)) : discovered(core, offer);
}

function discovered(core: Core, offer: CatalogOffer): Result {
  const result: Result = {
    resultType: 'complete',
    supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
    capabilities: serverCapabilities(offer, core.catalog.watch !== undefined, core.tasks !== undefined),
    ttlMs: core.listTtlMs,
    // What a catalog filtered per caller offers is that caller's: no shared cache may keep it.
    cacheScope: core.catalog.sameForEveryone ? 'public' : 'private',
  };
  if (core.instructions !== undefined) result.instructions = core.instructions;
  return result;
}
