export { decodeBase64urlStrict, isCanonicalBase64url } from './base64url.js';
export { argumentsDigest, canonicalJson, NotJsonError } from './canonical-json.js';
export {
  MAX_ROUND,
  MAX_TTL_MS,
  newFlowId,
  OPEN_FAILURE_REASONS,
  type OpenedState,
  type OpenFailureReason,
  type OpenResult,
  type SealOptions,
  STATE_CODEC_DEFAULTS,
  type StateBinding,
  StateCodec,
  type StateCodecOptions,
} from './codec.js';
export { StateRangeError, StateTooLargeError, StateUsageError } from './errors.js';
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
  purposeKeys,
  STATE_FORMAT_VERSION,
  type StateKey,
} from './keyring.js';
