// client_secret_basic, the one encoding the OAuth client and the gateway's token exchange both send.
import type * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { clientSecretBasic } from '../../src/client/internal.js';

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
