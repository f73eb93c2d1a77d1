// client_secret_basic (RFC 6749 §2.3.1), written once for the OAuth client and the gateway's token exchange.
import type * as oauth from 'oauth4webapi';

/** `application/x-www-form-urlencoded` as WHATWG defines it (what RFC 6749 §2.3.1 asks before Base64). */
const formEncode = (s: string) => new URLSearchParams({ s }).toString().slice(2);

/**
 * client_secret_basic with the WHATWG form encoding: oauth4webapi also escapes unreserved characters such as `-`,
 * which some authorization servers do not decode, so a client id like `my-client` would not be recognised.
 */
export function clientSecretBasic(clientId: string, clientSecret: string): oauth.ClientAuth {
  return (_as, _client, _body, headers) => {
    headers.set(
      'authorization',
      `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString('base64')}`,
    );
  };
}
