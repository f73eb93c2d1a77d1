export { decodeBase64urlStrict, isCanonicalBase64url } from './base64url.js';
export { argumentsDigest, canonicalJson, NotJsonError } from './canonical-json.js';
export {
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_MAX_TOKEN_BYTES,
  DEFAULT_TTL_MS,
  MAX_ROUND,
  MAX_TTL_MS,
  newFlowId,
  OPEN_FAILURE_REASONS,
  type OpenedState,
  type OpenFailureReason,
  type OpenResult,
  type SealOptions,
  type StateBinding,
  StateCodec,
  type StateCodecOptions,
  StateTooLargeError,
} from './codec.js';
export {
  createEphemeralKeyring,
  generateKeySpec,
  Keyring,
  KeySpecError,
  KID_PATTERN,
  MIN_SECRET_BYTES,
  type Principal,
  parseKeySpec,
  principalDigest,
  STATE_FORMAT_VERSION,
  type StateKey,
} from './keyring.js';
