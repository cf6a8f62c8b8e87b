/**
 * An assertion refused: `detail` is for the server log, `description` for the client. Signature
 * and structure failures share one description, so a client probing wrapping attacks learns
 * nothing about which check stopped it.
 */
export class AssertionRejected extends Error {
  constructor(
    readonly description: string,
    readonly detail: string = description,
  ) {
    super(detail);
    this.name = 'AssertionRejected';
  }
}

/** The client-facing description of every signature or structure failure. */
export const BAD_SIGNATURE = 'assertion is not signed by a trusted issuer';
