import { withRequestId } from '../oauth/authorize/hosted-login.js';
import type { LoginFlow } from './flows.js';

/** Where the browser goes after a stage: the hosted login page, or back to the client. */
export interface LoginRedirects {
  nextStage(flow: LoginFlow): string;
  completed(flow: LoginFlow): string;
}

export const defaultRedirects: LoginRedirects = {
  nextStage: (flow) => `/login?request_id=${encodeURIComponent(flow.id)}`,
  // A page that started the login (a plugin's) reads its result with the request id.
  completed: (flow) =>
    typeof flow.params.return_to === 'string'
      ? withRequestId(flow.params.return_to, flow.id)
      : `/login/complete?request_id=${encodeURIComponent(flow.id)}`,
};
