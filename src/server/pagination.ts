// Opaque cursors for list methods (server/utilities/pagination.mdx). A cursor is the next offset, base64url-encoded.
import { invalidParams } from '../protocol/index.js';

export function paginate<T>(
  items: readonly T[],
  cursor: unknown,
  pageSize: number,
): { page: T[]; nextCursor?: string } {
  let start = 0;
  if (cursor !== undefined) {
    const decoded = typeof cursor === 'string' ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
    if (!/^(0|[1-9][0-9]{0,8})$/.test(decoded) || Number(decoded) > items.length) {
      throw invalidParams('Invalid params: cursor is not one this server issued');
    }
    start = Number(decoded);
  }
  const end = Math.min(start + pageSize, items.length);
  const page = items.slice(start, end);
  return end < items.length ? { page, nextCursor: Buffer.from(String(end)).toString('base64url') } : { page };
}
