// What went wrong on the way to an HTTP endpoint, said for a person: OpenSSL's and libuv's codes are not messages.

const TLS_NOT_SPOKEN = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG', 'EPROTO']);
const CERT_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** One line about a failed request to `url`, naming the likely fix where there is one. */
export function describeNetworkError(url: URL, error: NodeJS.ErrnoException): string {
  const code = error.code ?? '';
  const where = url.host;
  if (
    url.protocol === 'https:' &&
    (TLS_NOT_SPOKEN.has(code) || /wrong version number|packet length/i.test(error.message))
  ) {
    const plain = new URL(url.href);
    plain.protocol = 'http:';
    return `${where} does not speak TLS (https): is it a plain-HTTP server? Try ${plain.href}`;
  }
  if (CERT_CODES.has(code)) return `the TLS certificate of ${where} is not trusted (${code})`;
  if (code === 'ECONNREFUSED') return `nothing is listening at ${where} (connection refused)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `cannot find the host ${url.hostname} (${code})`;
  if (code === 'ECONNRESET') return `${where} closed the connection (reset)`;
  if (code === 'ETIMEDOUT') return `${where} did not answer (connection timed out)`;
  return `POST ${url.href} failed: ${error.message}`;
}
