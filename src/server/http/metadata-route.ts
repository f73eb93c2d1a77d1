// Protected Resource Metadata (RFC 9728) at the paths the bearer auth names: public, cacheable, readable from a
// browser-based client.
import type { BearerAuth } from '../../auth/index.js';
import { ErrorCode } from '../../protocol/index.js';
import { sendError } from './endpoint.js';
import type { HttpRoute } from './wire.js';

/** The route of `auth`'s metadata document (GET and HEAD). */
export function metadataRoute(auth: BearerAuth): HttpRoute {
  return {
    handles: (pathname) => auth.metadataPaths.includes(pathname),
    handle(req, res) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD');
        sendError(res, 405, ErrorCode.InvalidRequest, `Method ${req.method} not allowed: use GET`);
        return;
      }
      const body = auth.metadata;
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(new TextEncoder().encode(body).byteLength),
        'cache-control': 'public, max-age=3600',
        'access-control-allow-origin': '*',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    },
  };
}
