import type { Request, Response } from 'express';
import type { LoginContinuation } from './web.js';

/**
 * Answers a Gatehouse API call with its success envelope, `{"success":true,"status":200,"data":…}`.
 * Never cached, shared or private: the answers carry secrets (exchange and status ids, seeds, codes).
 */
export function answerSuccess(res: Response, data: unknown, status = 200): void {
  res.status(status).set('Cache-Control', 'no-store').json({ success: true, status, data });
}

/**
 * Since plugin API 1.3: answers a continuation of a login (`web.loginFlows.continue`) as the
 * continuation routes do (`CONTINUE_ROUTE`): a request that accepts JSON (an XHR) gets where the
 * login stands in the success envelope; a form post is sent on to `location`.
 */
export function answerContinuation(req: Request, res: Response, result: LoginContinuation): void {
  if (req.accepts(['html', 'json']) === 'json') {
    answerSuccess(res, {
      request_id: result.flow.id,
      completed: result.completed,
      stage: result.flow.stage,
      next_methods: result.nextMethods,
      redirect_to: result.location,
    });
  } else {
    // 303 so the browser follows with GET and never re-posts the credential (RFC 9700 §4.12).
    res.redirect(303, result.location);
  }
}
