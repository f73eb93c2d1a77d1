// client_secret_basic, the one encoding the OAuth client, the gateway's token exchange and connections send; and
// clientAuth, their one choice between none, basic and post.
import type * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { clientAuth, clientSecretBasic } from '../../src/client/internal.js';

function headerOf(clientId: string, secret: string): string | null {
  const headers = new Headers();
  const auth = clientSecretBasic(clientId, secret);
  void auth({} as oauth.AuthorizationServer, {} as oauth.Client, new URLSearchParams(), headers);
  return headers.get('authorization');
}

const decoded = (header: string | null) => Buffer.from(header!.slice('Basic '.length), 'base64').toString();

describe('clientSecretBasic', () => {
  it('leaves - . _ and * as they are, so `my-client` stays `my-client`', () => {
    expect(decoded(headerOf('my-client', 's3cr.et_*'))).toBe('my-client:s3cr.et_*');
  });

  it('form-encodes the rest before Base64 (RFC 6749 §2.3.1): a colon in the secret cannot split the pair', () => {
    expect(decoded(headerOf('a b', 'x:y+z/é'))).toBe('a+b:x%3Ay%2Bz%2F%C3%A9');
  });
});

describe('clientAuth', () => {
  const sent = (methods: string[] | undefined, secret: string | undefined) => {
    const headers = new Headers();
    const body = new URLSearchParams();
    const as = { issuer: 'https://as.example', token_endpoint_auth_methods_supported: methods };
    void clientAuth(as as oauth.AuthorizationServer, 'my-client', secret)(
      as as oauth.AuthorizationServer,
      { client_id: 'my-client' },
      body,
      headers,
    );
    return { basic: headers.get('authorization') !== null, post: body.get('client_secret') !== null };
  };

  it('basic by default, and whenever the server lists it', () => {
    expect(sent(undefined, 's')).toEqual({ basic: true, post: false });
    expect(sent(['client_secret_post', 'client_secret_basic'], 's')).toEqual({ basic: true, post: false });
  });

  it('post only for a server that lists post and not basic; nothing without a secret', () => {
    expect(sent(['client_secret_post'], 's')).toEqual({ basic: false, post: true });
    expect(sent(['client_secret_post'], undefined)).toEqual({ basic: false, post: false });
  });
});
