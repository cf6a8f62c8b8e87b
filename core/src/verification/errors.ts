import {
  ApiError,
  type AuthMethod,
  verificationError,
  VERIFICATION_ERRORS,
  type VerificationErrorCode,
} from '@gatehouse-auth/plugin-api';

// The catalogue and its error are the contract's (decision 84): plugins name its codes and
// declare their routes with them; the core's modules keep importing them from here.
export { verificationError, type VerificationErrorCode } from '@gatehouse-auth/plugin-api';

/** An error with an explicit status, e.g. EXCHANGE_INVALID as 404 when the id is unknown. */
export function verificationErrorWithStatus(code: VerificationErrorCode, status: number, message?: string): ApiError {
  return new ApiError(status, code, message ?? VERIFICATION_ERRORS[code][1]);
}

/** FIELD_MISSING naming every one of `names` that `fields` lacks (or has empty). */
export function requireFields(fields: Record<string, string>, names: string[]): void {
  const missing = names.filter((f) => !fields[f]);
  if (missing.length) throw verificationError('FIELD_MISSING', `missing: ${missing.join(', ')}`, { fields: missing });
}

/** The registered method a request names (in any case), or METHOD_NOT_FOUND. */
export function registeredMethod(extensions: { methods: { get(id: string): AuthMethod | undefined } }, id: string) {
  const method = extensions.methods.get(id.toUpperCase());
  if (!method) throw verificationError('METHOD_NOT_FOUND', `no verification method "${id}"`);
  return method;
}
