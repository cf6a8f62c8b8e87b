import type { Response } from 'express';

/** The success envelope of the Gatehouse API: `{"success":true,"status":200,"data":{...}}`. */
export function ok(res: Response, data: unknown, status = 200): void {
  res.status(status).json({ success: true, status, data });
}
