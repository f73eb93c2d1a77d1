// A tool author's misuse of the controls (no signed-in pages to send people to, an anonymous caller): a bug to fix,
// not a refusal to show the person.
export class ControlsUsageError extends Error {
  override readonly name = 'ControlsUsageError';
  readonly code = 'ERR_CONTROLS_USAGE';
}
