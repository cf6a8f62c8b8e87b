/** The parts of a nodemailer error that are safe to repeat: its code and text (which quotes the server's reply). */
interface NodemailerFailure {
  code?: unknown;
  message?: unknown;
}

/**
 * A plain Error describing why the SMTP server did not take a message. Built from scratch rather
 * than wrapping the original, which may carry the transport options (and so the password) around;
 * any echo of the password in the server's text is masked as well.
 */
export function smtpDeliveryError(channelId: string, err: unknown, auth?: { user: string; pass: string }): Error {
  const failure: NodemailerFailure = typeof err === 'object' && err !== null ? err : { message: String(err) };
  const code = typeof failure.code === 'string' ? `${failure.code} ` : '';
  const text = typeof failure.message === 'string' && failure.message !== '' ? failure.message : 'unknown error';
  const error = new Error(`smtp channel "${channelId}" could not send: ${code}${mask(text, auth)}`);
  error.name = 'SmtpDeliveryError';
  return error;
}

function mask(text: string, auth?: { user: string; pass: string }): string {
  if (!auth) return text;
  let out = text;
  for (const secret of [auth.pass, Buffer.from(auth.pass).toString('base64')]) out = out.split(secret).join('***');
  return out;
}
