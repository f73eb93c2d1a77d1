// server/discover: the versions and capabilities this server offers (basic/lifecycle.mdx).
import { type Result, type ServerCapabilities, SUPPORTED_PROTOCOL_VERSIONS } from '../../protocol/index.js';
import type { Registry } from '../registry.js';
import type { Core } from './method.js';

export function serverCapabilities(registry: Registry): ServerCapabilities {
  const caps: ServerCapabilities = {};
  if (registry.tools.size > 0) caps.tools = {};
  if (registry.prompts.size > 0) caps.prompts = {};
  if (registry.resources.size > 0 || registry.templates.length > 0) caps.resources = {};
  if (registry.prompts.size > 0 || registry.templates.length > 0) caps.completions = {};
  caps.logging = {};
  return caps;
}

export function serverDiscover(core: Core): Result {
  const result: Result = {
    resultType: 'complete',
    supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
    capabilities: serverCapabilities(core.registry),
    ttlMs: core.listTtlMs,
    cacheScope: 'public',
  };
  if (core.instructions !== undefined) result.instructions = core.instructions;
  return result;
}
