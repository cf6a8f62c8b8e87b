import type { Response } from 'express';
import type { Reply } from './fast-routes.js';

/** The success envelope of the Gatehouse API: `{"success":true,"status":200,"data":{...}}`. */
export function success(data: unknown, status = 200): Reply {
  return { status, body: { success: true, status, data } };
}

/** `success` as an express response. */
export function ok(res: Response, data: unknown, status = 200): void {
  const reply = success(data, status);
  res.status(reply.status).json(reply.body);
}
