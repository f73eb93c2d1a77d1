// The server's own pages obey the endpoint's Host/Origin rules: a DNS-rebinding page must not read them.
import { ErrorCode } from '../../protocol/index.js';
import { checkOrigin, type OriginPolicy } from '../http-guards.js';
import { sendError } from './endpoint.js';
import type { HttpRoute, WireRequest, WireResponse } from './wire.js';

/** `route`, refusing with 403 a request whose Host or Origin the policy does not allow. */
export function originChecked<Req extends WireRequest, Res extends WireResponse>(
  route: HttpRoute<Req, Res>,
  policy: OriginPolicy,
): HttpRoute<Req, Res> {
  return {
    handles: (pathname) => route.handles(pathname),
    handle(req, res) {
      const refused = checkOrigin(req.headers, policy);
      if (refused) sendError(res, 403, ErrorCode.InvalidRequest, `Forbidden: ${refused}`);
      else route.handle(req, res);
    },
  };
}
