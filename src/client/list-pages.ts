// Every page of a list (tools/list, prompts/list, …), within one time limit for all pages (not one per page) and a
// bound on the total held in memory: a server cannot keep the client paging, or fill it, for ever.

import type { Connection, RequestOptions } from './connection.js';
import { CLIENT_DEFAULTS } from './driver.js';
import { ProtocolViolation } from './errors.js';

export async function listAll<T>(
  connection: Connection,
  method: string,
  field: string,
  options?: RequestOptions,
): Promise<T[]> {
  const { signal, done } = connection.withTimeout(options);
  const items: T[] = [];
  let chars = 0;
  let cursor: string | undefined;
  try {
    for (let page = 0; page < CLIENT_DEFAULTS.maxListPages; page++) {
      const result = await connection.request(method, cursor === undefined ? {} : { cursor }, {
        ...options,
        signal,
      });
      const list = result[field];
      if (!Array.isArray(list)) throw new ProtocolViolation(`${method} result has no ${field} array`);
      for (const item of list) {
        chars += jsonSize(item);
        if (items.length >= CLIENT_DEFAULTS.maxListItems || chars > CLIENT_DEFAULTS.maxListChars)
          throw new ProtocolViolation(
            `${method} returned more than ${CLIENT_DEFAULTS.maxListItems} items or ${CLIENT_DEFAULTS.maxListChars} characters in all; stopped at page ${page + 1}`,
          );
        items.push(item as T);
      }
      const next = result.nextCursor;
      if (typeof next !== 'string' || next === '') return items;
      cursor = next;
    }
    throw new ProtocolViolation(`${method} returned more than ${CLIENT_DEFAULTS.maxListPages} pages`);
  } finally {
    done();
  }
}

/** Characters of an item as JSON, or a huge number for one too deep to measure (it is refused either way). */
function jsonSize(item: unknown): number {
  try {
    return JSON.stringify(item)?.length ?? 0;
  } catch {
    return Number.MAX_SAFE_INTEGER;
  }
}
