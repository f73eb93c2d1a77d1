// Every default of the flow room in one frozen object, each with why it is what it is.

export const FLOW_DEFAULTS = Object.freeze({
  /** A person mistypes; an agent guessing at a form should not loop: the fourth invalid answer ends the call. */
  maxInvalidAnswers: 3,
  /**
   * A relayed question (ask.forward) is at most the size of the largest request the server takes in
   * (SERVER_DEFAULTS.maxBodyBytes): room for a sampling request with an image, not for an upstream's flood.
   */
  maxForwardedBytes: 1024 * 1024,
  /** How deep a relayed question may nest: the server's bound on what a caller may nest (maxInputDepth). */
  maxForwardedDepth: 64,
});
