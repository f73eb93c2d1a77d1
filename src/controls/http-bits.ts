// Small answers the controls' routes share: JSON for the API, a 303 for the pages, a request body as JSON.
import { MrtrError, type PageRequest, type PageResponse, readBodyText } from '../protocol/index.js';

const MAX_JSON_BYTES = 16 * 1024;

export function sendJson(
  res: PageResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

export function seeOther(res: PageResponse, location: string): void {
  res.writeHead(303, { location, 'cache-control': 'no-store' });
  res.end();
}

/** A request body the approvals API cannot read (wrong type, too large, not a JSON object). */
export class BodyError extends MrtrError {
  override readonly name = 'BodyError';
  declare readonly code: 'ERR_REQUEST_BODY';
  constructor(message: string) {
    super('ERR_REQUEST_BODY', message);
  }
}

/** A small JSON object body (application/json), or a BodyError naming what is wrong. */
export function readJsonBody(req: PageRequest): Promise<Record<string, unknown>> {
  if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
    req.resume();
    return Promise.reject(new BodyError('expected Content-Type: application/json'));
  }
  return readBodyText(req, MAX_JSON_BYTES, () => new BodyError('body too large')).then((text) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new BodyError('the body is not JSON');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new BodyError('the body must be a JSON object');
    return value as Record<string, unknown>;
  });
}
