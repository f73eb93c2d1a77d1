// mrtr/notify: approvers hear of a request that waits for them — signed JSON webhooks and Slack-compatible messages,
// delivered beside the rounds, never in their way.
export { type ApprovalRequested, slackText } from './bodies.js';
export { NotifyConfigError, readNotifyConfig, type WebhookTarget } from './config.js';
export {
  ID_HEADER,
  SIGNATURE_HEADER,
  signatureOf,
  TIMESTAMP_HEADER,
  type VerifyWebhookInput,
  verifyWebhook,
  type WebhookRefusal,
  WebhookVerifyError,
} from './signature.js';
export { NOTIFY_DEFAULTS, WebhookNotifier, type WebhookNotifierOptions } from './webhook-notifier.js';
