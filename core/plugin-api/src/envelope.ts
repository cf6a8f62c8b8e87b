import type { Response } from 'express';

/**
 * Answers a Gatehouse API call with its success envelope, `{"success":true,"status":200,"data":…}`.
 * Never cached, shared or private: the answers carry secrets (exchange and status ids, seeds, codes).
 */
export function answerSuccess(res: Response, data: unknown, status = 200): void {
  res.status(status).set('Cache-Control', 'no-store').json({ success: true, status, data });
}
