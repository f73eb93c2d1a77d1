// How mrtr's OAuth clients authenticate at a token endpoint: client_secret_basic (RFC 6749 §2.3.1), written once for
// the OAuth client, the gateway's token exchange and a server's connections, and the choice between basic and post.
import * as oauth from 'oauth4webapi';

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

/**
 * A configured client's authentication at `as`: none without a secret; basic, which RFC 6749 §2.3.1 says every
 * server supports; post only for a server that lists post and not basic.
 */
export function clientAuth(
  as: oauth.AuthorizationServer,
  clientId: string,
  clientSecret: string | undefined,
): oauth.ClientAuth {
  if (clientSecret === undefined) return oauth.None();
  const methods = as.token_endpoint_auth_methods_supported;
  if (
    Array.isArray(methods) &&
    methods.includes('client_secret_post') &&
    !methods.includes('client_secret_basic')
  )
    return oauth.ClientSecretPost(clientSecret);
  return clientSecretBasic(clientId, clientSecret);
}
