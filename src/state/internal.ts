// Lent to the other rooms of mrtr, not public API (mrtr/state is index.ts): the one HMAC signer every signed value uses.
export {
  deriveSubkey,
  hmacSha256,
  KidSigner,
  MAX_SIGNED_TOKEN_BYTES,
  macMatches,
  type SigningKey,
} from './signing.js';
