import { ApiError, isProtocolError, type ProtocolError } from '../errors.js';

/** multer's codes for a body past one of the route's limits: the same 413 as a body past its length. */
const PAST_A_LIMIT = new Set([
  'LIMIT_FILE_SIZE',
  'LIMIT_FIELD_VALUE',
  'LIMIT_PART_COUNT',
  'LIMIT_FILE_COUNT',
  'LIMIT_FIELD_COUNT',
]);

/**
 * What a failed multipart parse answers: every error multer passes on is the client's doing.
 * multer's own errors name a limit or an unexpected part; busboy's arrive as plain `Error`s
 * ("Multipart: Boundary not found", "Malformed part header", "Unexpected end of form"), as do
 * a request that stopped arriving ("Request aborted"). None of them is a fault to log.
 */
export function multipartError(err: unknown): ProtocolError {
  // The route's own refusal, e.g. a part of a type the method does not take.
  if (isProtocolError(err)) return err;
  const { name, code, field, message } = err as { name?: string; code?: string; field?: string; message?: string };
  if (name !== 'MulterError') {
    // busboy's messages can quote the Content-Type header: not repeated back.
    return new ApiError(400, 'INVALID_FIELD', 'the multipart body is malformed');
  }
  // multer's messages are its own fixed texts ("Too many fields", "Unexpected file field").
  const reason = String(message).toLowerCase();
  const details = field ? { fields: [field] } : undefined;
  return PAST_A_LIMIT.has(String(code))
    ? new ApiError(413, 'PAYLOAD_TOO_LARGE', `the multipart body is past a limit: ${reason}`, details)
    : new ApiError(400, 'INVALID_FIELD', `the multipart body is not acceptable: ${reason}`, details);
}
