// Small answers the controls' routes share: JSON for the API, a 303 for the pages, a request body as JSON.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MrtrError } from '../protocol/index.js';

const MAX_JSON_BYTES = 16 * 1024;

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

export function seeOther(res: ServerResponse, location: string): void {
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
export function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
      req.resume();
      reject(new BodyError('expected Content-Type: application/json'));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_JSON_BYTES) {
        req.destroy();
        reject(new BodyError('body too large'));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      try {
        const value = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        if (typeof value !== 'object' || value === null || Array.isArray(value))
          reject(new BodyError('the body must be a JSON object'));
        else resolve(value as Record<string, unknown>);
      } catch {
        reject(new BodyError('the body is not JSON'));
      }
    });
    req.on('error', reject);
  });
}
