/** What an endpoint answers: a JSON body (or none), its status and extra headers. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * Answers of the Gatehouse API carry secrets (exchange and status ids, TOTP seeds and QR codes,
 * backup codes): no cache, shared or private, may keep one.
 */
export const NO_STORE = { 'Cache-Control': 'no-store' } as const;

/** The success envelope of the Gatehouse API: `{"success":true,"status":200,"data":{...}}`. */
export function success(data: unknown, status = 200): Reply {
  return { status, headers: NO_STORE, body: { success: true, status, data } };
}
