import { definePlugin, z } from '@gatehouse-auth/core';
import type { Request } from 'express';
import { ACCOUNT_PATH, CONSENT_PATH, choicePages } from './pages.js';

export { ACCOUNT_PATH, CONSENT_PATH } from './pages.js';

/** The form's fields as posted: the core checks every one of them. */
const formOf = (req: Request) => (req.body ?? {}) as Record<string, unknown>;

/**
 * The authorization endpoint's user-facing choices (decision 75): the consent page
 * (`/login/consent`) and the account choice of `prompt=select_account` (`/login/account`), on
 * the core's `web.authorize` operations, which keep the flow cookie's binding, the form's CSRF
 * token, single use and the answer to the app in the core. Left out of `plugins:`, a request
 * that needs consent answers the app `consent_required`, `prompt=select_account` with a session
 * `account_selection_required`, and an app with `consent_required: true` stops start-up.
 */
export default definePlugin({
  name: '@gatehouse-auth/page-consent',
  apiVersion: '^1.3',
  options: z.strictObject({}),
  register(api) {
    const { authorize } = api.web;
    const { http } = api.services;
    const pages = choicePages(api);

    // Each page is mounted at its own path: the core redirects there only while a plugin mounts it.
    const consent = http.createRouter();
    consent.get('', async (req, res) => {
      const shown = await authorize.consent.show(req, res, req.query.request_id);
      if (shown) pages.consent(req, res, shown);
    });
    consent.post('', http.form(), async (req, res) => {
      const { request_id: requestId, decision, csrf } = formOf(req);
      await authorize.consent.answer(req, res, { requestId, decision, csrf });
    });
    api.routes.add({ path: CONSENT_PATH, router: consent });

    const account = http.createRouter();
    account.get('', async (req, res) => {
      const shown = await authorize.account.show(req, res, req.query.request_id);
      if (shown) pages.account(req, res, shown);
    });
    account.post('', http.form(), async (req, res) => {
      const { request_id: requestId, choice, csrf } = formOf(req);
      await authorize.account.answer(req, res, { requestId, choice, csrf });
    });
    api.routes.add({ path: ACCOUNT_PATH, router: account });
  },
});
