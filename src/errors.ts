// Every error class mrtr throws, one per code: `switch (error.code)` on an AnyMrtrError narrows to the class, so its
// own fields (a refusal's status, a webhook's reason) are there to read. Types only: nothing here loads a room.
import type { AuditError } from './audit/index.js';
import type {
  AuthConfigError,
  AuthRefusal,
  DevTokensError,
  FormError,
  IssuerMetadataError,
  SignInConfigError,
} from './auth/index.js';
import type { ConformanceError, UsageError } from './cli/internal.js';
import type {
  CallIncompleteError,
  HeldCallError,
  OAuthError,
  ProtocolViolation,
  RequestAborted,
  SessionExpired,
  TransportFailure,
} from './client/index.js';
import type { ConnectionRefused, ConnectionsUsageError } from './connections/index.js';
import type { ConsoleUsageError } from './console/index.js';
import type { ApprovalRefused, ControlsUsageError } from './controls/index.js';
import type { BodyError } from './controls/internal.js';
import type { FlowEnded, FlowUsageError } from './flow/index.js';
import type { EgressRefused, GatewayConfigError, GatewayPinsError } from './gateway/index.js';
import type { NotifyConfigError, WebhookVerifyError } from './notify/index.js';
import type {
  CorruptDataError,
  InvalidArgumentError,
  InvalidOptionError,
  MakeDirectoryError,
  StoreContendedError,
  TimeLimitError,
} from './protocol/index.js';
import type { HandlerTimeoutError, ServerError } from './server/index.js';
import type { KeySpecError, NotJsonError, StateTooLargeError, StateUsageError } from './state/index.js';
import type { StoreUnavailableError } from './stores/index.js';

/** A transport failure of its own code (ERR_TRANSPORT); its subclasses carry ERR_SESSION_EXPIRED and ERR_OAUTH. */
type PlainTransportFailure = TransportFailure & { readonly code: 'ERR_TRANSPORT' };

export type AnyMrtrError =
  | InvalidOptionError
  | InvalidArgumentError
  | TimeLimitError
  | RequestAborted
  | CorruptDataError
  | MakeDirectoryError
  | StateUsageError
  | StateTooLargeError
  | KeySpecError
  | NotJsonError
  | StoreUnavailableError
  | StoreContendedError
  | FlowEnded
  | FlowUsageError
  | ServerError
  | HandlerTimeoutError
  | AuthRefusal
  | AuthConfigError
  | IssuerMetadataError
  | DevTokensError
  | SignInConfigError
  | FormError
  | AuditError
  | ControlsUsageError
  | ApprovalRefused
  | ConnectionsUsageError
  | ConnectionRefused
  | ConsoleUsageError
  | NotifyConfigError
  | WebhookVerifyError
  | BodyError
  | ProtocolViolation
  | PlainTransportFailure
  | SessionExpired
  | OAuthError
  | CallIncompleteError
  | HeldCallError
  | GatewayConfigError
  | EgressRefused
  | GatewayPinsError
  | UsageError
  | ConformanceError;
