import { ApiError } from './errors.js';

/**
 * Every stable error code of the verification and login APIs with its HTTP status.
 * docs/verification.md lists the same table; a test keeps the two in step.
 */
export const VERIFICATION_ERRORS = {
  EXCHANGE_INVALID: [400, 'the exchange_id is missing, unknown or not valid for this method'],
  EXCHANGE_USED: [409, 'the exchange_id was already used'],
  EXCHANGE_EXPIRED: [410, 'the exchange_id has expired; initiate the method again'],
  TOO_MANY_ATTEMPTS: [429, 'too many wrong attempts; start the sign-in again from the app'],
  TOO_MANY_INITIATIONS: [429, 'this sign-in has started too many verifications; start again from the app'],
  RESEND_TOO_SOON: [429, 'a new code was sent moments ago; send another after retry_after seconds'],
  WRONG_FLOW_STAGE: [400, 'the exchange_id belongs to a different stage of the login flow'],
  SINGLE_FACTOR_NOT_ALLOWED: [400, 'single_factor_auth is only accepted for single-factor methods (FACE)'],
  FIELD_MISSING: [400, 'a required field is missing'],
  INVALID_FIELD: [400, 'a field has an invalid value'],
  FIELDS_MIXED: [400, 'the request mixes fields of different methods'],
  METHOD_NOT_FOUND: [404, 'no such verification method'],
  METHOD_NOT_ENABLED: [403, 'the method is not enabled for this app or user'],
  USER_DISABLED: [403, 'the user account is disabled'],
  VERIFICATION_FAILED: [401, 'verification failed'],
  FDS_BLOCKED: [403, 'the request was blocked by fraud detection'],
  REQUEST_NOT_FOUND: [404, 'no such login request (request_id)'],
  REQUEST_EXPIRED: [410, 'the login request has expired'],
  REQUEST_COMPLETED: [409, 'the login request is already complete'],
  STATUS_NOT_FOUND: [404, 'no such status_id'],
  FLOW_NOT_BOUND: [403, 'this sign-in was started in another browser; start again from the app'],
  ORIGIN_NOT_ALLOWED: [403, 'the form was not sent from the app’s login page (Origin)'],
  STATUS_MISMATCH: [400, 'the status_id does not belong to this request, method or user'],
  STATUS_NOT_AUTHENTICATED: [409, 'the status_id is not authenticated'],
  STATUS_USED: [409, 'the status_id was already used'],
  STATUS_EXPIRED: [410, 'the status_id has expired'],
  ENROLLMENT_NOT_SUPPORTED: [400, 'the method has no enrollment step of this kind'],
  SETUP_NOT_ALLOWED: [403, 'this sign-in cannot set up this method'],
  UNAUTHORIZED: [401, 'a valid bearer token is required'],
  REAUTHENTICATION_REQUIRED: [401, 'changing authentication methods needs a recent login; sign in again'],
  INSUFFICIENT_SCOPE: [403, 'the access token does not allow managing sign-in methods'],
  USER_NOT_FOUND: [404, 'no such user'],
  CREDENTIAL_NOT_FOUND: [404, 'no such credential'],
  DEVICE_PROOF_INVALID: [401, 'the Device-Proof header is missing or not valid for this call'],
  DEVICE_NOT_FOUND: [404, 'no such device'],
  DEVICE_MISMATCH: [403, "the push is for another device, or the client_id is not the device's"],
  DEVICE_EXISTS: [409, 'a device with this device_id is bound already'],
  PUSH_STATE: [409, 'the push is not in a state that allows this step'],
  PUSH_NOT_ALLOWED: [409, 'the push was not allowed on the device yet'],
  BINDING_INVALID: [404, 'no such binding code, or it was used'],
  BINDING_EXPIRED: [410, 'the binding code has expired; start the binding again'],
} as const satisfies Record<string, readonly [number, string]>;

export type VerificationErrorCode = keyof typeof VERIFICATION_ERRORS;

export function verificationError(
  code: VerificationErrorCode,
  message?: string,
  details?: Record<string, unknown>,
): ApiError {
  const [status, text] = VERIFICATION_ERRORS[code];
  return new ApiError(status, code, message ?? text, details);
}
