import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import {
  html,
  readCookie,
  type LoginFlowView,
  type PluginApi,
  type SafeHtml,
  type UserAccounts,
  type UserRecord,
} from '@gatehouse-auth/core';
import type { RecoveryOptions } from './options.js';
import { messagesFor, RECOVERY_CLIENT_ID } from './pages.js';
import { PASSWORD_METHOD, type PasswordRecovery } from './recovery.js';

type Router = ReturnType<PluginApi['services']['http']['createRouter']>;

/** The app whose login proves the password and a backup code. */
export const LOST_FACTOR_CLIENT_ID = 'gatehouse-recovery-factor';
/** The method that proves it, and the stages of that login. */
export const BACKUP_METHOD = 'BACKUPCODE';
export const LOST_FACTOR_STAGES = [[PASSWORD_METHOD], [BACKUP_METHOD]];

/** How long, after that login, the user may pick the factor to remove (seconds). */
const CHOICE_TTL = 600;

/**
 * A lost second factor, by backup code (/recovery/factor): the user signs in to the app
 * `gatehouse-recovery-factor` with their password and a backup code (a fresh login: a session
 * older than 5 minutes does not count), then removes the second factor they lost. The removal
 * ends every session and revokes every token (the core's setup rule), the user is told by a
 * notice of its own, an event is kept, and they are asked to set up a new one.
 */
export function lostFactorPages(api: PluginApi, recovery: PasswordRecovery, options: RecoveryOptions, router: Router) {
  const { web } = api;
  const secure = web.issuer.startsWith('https://');
  const cookieName = `${secure ? '__Host-' : ''}gh_recovery_factor`;
  const cookieOptions = { httpOnly: true, secure, sameSite: 'lax' as const, path: '/' };
  const action = (path = '') => web.url(`/recovery/factor${path}`);
  const accounts = () => api.services.resolve<UserAccounts>('userAccounts');
  const hash = (value: string) => api.services.crypto.sha256(value);
  const t = (req: Request) => web.messages(req);
  const body = (req: Request) => (req.body ?? {}) as Record<string, unknown>;

  function show(
    req: Request,
    res: Response,
    title: string,
    content: SafeHtml,
    problem?: { code: string; status: number },
  ) {
    const m = t(req);
    web.page(req, res, {
      title,
      status: problem?.status ?? 200,
      body: html`<main class="card" id="gh-recovery-factor-page">
        <h1>${title}</h1>
        ${
          problem
            ? html`<p class="message error" role="alert" id="gh-notice" data-code="${problem.code}">
                ${m.or(`recovery.error.${problem.code}`, m.t('recovery.error.other'))}
              </p>`
            : null
        }
        ${content}
      </main>`,
    });
  }

  function startPage(req: Request, res: Response, problem?: { code: string; status: number }) {
    const m = t(req);
    show(
      req,
      res,
      m.t('recovery.lost.title'),
      html`<p>${m.t('recovery.lost.text')}</p>
        <form method="post" action="${action()}">
          <input type="hidden" name="csrf" value="${web.csrf.token(req, res)}" />
          <button class="primary" type="submit">${m.t('recovery.lost.start')}</button>
        </form>`,
      problem,
    );
  }

  /** The user's second factors that may go: every method set up but the password and the backup codes. */
  async function removable(user: UserRecord, req: IncomingMessage): Promise<string[]> {
    const methods = (await accounts().methods(user, req)) as unknown as { method: string; enrolled: boolean }[];
    return methods
      .filter((m) => m.enrolled && m.method !== PASSWORD_METHOD && m.method !== BACKUP_METHOD)
      .map((m) => m.method);
  }

  async function choicePage(req: Request, res: Response, user: UserRecord, problem?: { code: string; status: number }) {
    const m = t(req);
    const methods = await removable(user, req);
    const label = (id: string) => accounts().method(id, req)?.label ?? id;
    const csrf = web.csrf.token(req, res);
    show(
      req,
      res,
      m.t('recovery.lost.title'),
      methods.length
        ? html`<p>${m.t('recovery.lost.choose')}</p>
            ${methods.map(
              (id) =>
                html`<form method="post" action="${action('/remove')}">
                  <input type="hidden" name="csrf" value="${csrf}" />
                  <input type="hidden" name="method" value="${id}" />
                  <button class="danger" type="submit">${m.t('recovery.lost.remove', { method: label(id) })}</button>
                </form>`,
            )}`
        : html`<p class="empty">${m.t('recovery.lost.none')}</p>`,
      problem,
    );
  }

  /** The user this browser proved to be in the lost-factor login, or null. */
  async function chooser(req: Request): Promise<UserRecord | null> {
    const value = readCookie(req, cookieName);
    if (!value || value.length > 100) return null;
    const stored = await api.records.get(`factor:${hash(value)}`);
    const user = stored ? await api.services.users.findById(String(stored.data.user_id)) : null;
    return user?.status === 'active' ? user : null;
  }

  router.get('/factor', (req, res) => startPage(req, res));

  router.post('/factor', api.services.http.form(), async (req, res) => {
    if (!web.csrf.valid(req, body(req).csrf)) return startPage(req, res, { code: 'CSRF', status: 403 });
    // Fresh: a backup code proven within 5 minutes, in this browser.
    await web.login.start(req, res, { clientId: LOST_FACTOR_CLIENT_ID, returnTo: action('/verified'), maxAge: 300 });
  });

  router.get('/factor/verified', async (req, res) => {
    const login = await web.login.result(req, res, req.query.request_id);
    const proved = login?.methods.some((c) => c.method === BACKUP_METHOD);
    const user = login && proved ? await api.services.users.findById(login.userId) : null;
    if (!login || !user || user.status !== 'active') return startPage(req, res, { code: 'LOGIN_FAILED', status: 403 });
    const value = api.services.crypto.randomToken(24);
    await api.records.put(`factor:${hash(value)}`, { user_id: user.id }, { ttlSeconds: CHOICE_TTL });
    res.cookie(cookieName, value, { ...cookieOptions, maxAge: CHOICE_TTL * 1000 });
    await choicePage(req, res, user);
  });

  router.post('/factor/remove', api.services.http.form(), async (req, res) => {
    const user = await chooser(req);
    if (!user) return startPage(req, res, { code: 'RECOVERY_EXPIRED', status: 410 });
    if (!web.csrf.valid(req, body(req).csrf)) return choicePage(req, res, user, { code: 'CSRF', status: 403 });
    const method = typeof body(req).method === 'string' ? (body(req).method as string) : '';
    if (!(await removable(user, req)).includes(method)) {
      return choicePage(req, res, user, { code: 'NOT_ENROLLED', status: 400 });
    }
    // Once: the choice is spent by the first removal (the database decides between two).
    if (!(await api.records.consume(`factor:${hash(readCookie(req, cookieName)!)}`))) {
      return startPage(req, res, { code: 'RECOVERY_EXPIRED', status: 410 });
    }
    res.clearCookie(cookieName, cookieOptions);
    const actor = { via: 'recovery', userId: user.id, ip: web.clientIp(req) };
    // The core's removal: the user's sessions and tokens end with it.
    await accounts().resetFactor(actor, user, method);
    await api.services.events.record({
      type: 'recovery.factor_removed',
      userId: user.id,
      method,
      ip: actor.ip,
    });
    const label = accounts().method(method, req)?.label ?? method;
    await recovery.notify(user, 'factor', { method: label }, messagesFor(api, req));
    const m = t(req);
    show(
      req,
      res,
      m.t('recovery.lost.done_title'),
      html`<p role="status">${m.t('recovery.lost.done_text', { method: label })}</p>`,
    );
  });

  /** "Lost it? Use a backup code" beside a second factor of a login's stage that allows backup codes. */
  function loginLink(req: IncomingMessage, flow: LoginFlowView) {
    // Not in the reset's own second-factor login (the user forgot the password the way out needs).
    if (!options.lost_factor || flow.clientId === LOST_FACTOR_CLIENT_ID || flow.clientId === RECOVERY_CLIENT_ID) {
      return null;
    }
    const stage = flow.stages[flow.stage] ?? [];
    const method = stage.find((id) => id !== PASSWORD_METHOD && id !== BACKUP_METHOD);
    if (!method || !stage.includes(BACKUP_METHOD) || stage.includes(PASSWORD_METHOD)) return null;
    const uiLocales = typeof flow.oauth?.ui_locales === 'string' ? flow.oauth.ui_locales : null;
    return { method, href: action(), text: web.messages(req, uiLocales).t('recovery.lost.link') };
  }

  return { loginLink };
}
