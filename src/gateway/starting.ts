// What a caller is told while an upstream started with the gateway has not answered yet: a call to its tools is
// refused with a clear error and a time to retry (not "unknown tool"), and a listing names it in `_meta`.
import { ErrorCode, RoundRefused } from '../protocol/index.js';

/** `_meta` of a partial tools/list: the upstreams still starting, and a sentence for a person. */
export const META_UPSTREAMS_STARTING = 'dev.mrtr/upstreamsStarting';
export const META_NOTICE = 'dev.mrtr/notice';

/** Seconds a caller is asked to wait before calling a starting upstream's tool again. */
const RETRY_AFTER_SECONDS = 2;

/** The refusal of a call to a tool whose upstream is still starting: 503 with Retry-After, over HTTP. */
export function upstreamStarting(upstream: string): RoundRefused {
  return new RoundRefused('upstream_starting', {
    code: ErrorCode.InternalError,
    message: `Upstream ${upstream} is still starting: its tools are not available yet; try again in ${RETRY_AFTER_SECONDS} s`,
    data: { upstream, retryAfterSeconds: RETRY_AFTER_SECONDS },
    httpStatus: 503,
    httpHeaders: { 'retry-after': String(RETRY_AFTER_SECONDS) },
  });
}
