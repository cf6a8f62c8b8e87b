/** A provider error, with the message's secrets blanked out: it may echo the message. */
export function scrubbed(err: unknown, secrets: string[] = []): Error {
  let reason = err instanceof Error ? err.message : String(err);
  for (const secret of secrets) if (secret) reason = reason.replaceAll(secret, '[code]');
  return new Error(reason);
}
