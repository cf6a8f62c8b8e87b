import type { IncomingMessage } from 'node:http';
import {
  html,
  isProtocolError,
  type Actor,
  type PluginApi,
  type UserAccounts,
  type UserRecord,
  type MethodSetup,
} from '@gatehouse-auth/core';
import { csrfField, when, type Site, type SiteRequest } from '@gatehouse-auth/site-kit';
import { knowledgeOnly, type ActionGuard } from './guard.js';

/**
 * The service this plugin provides (`services.resolve<AccountDeletion>('accountDeletion')`), for
 * the cidaas deletion call: the same grace period, records and sweep as the page's.
 */
export interface AccountDeletion {
  /** Disables the user now and deletes them once the grace period is over; answers when. */
  schedule(actor: Actor, user: UserRecord, req: IncomingMessage): Promise<Date>;
  /** Deletes the users whose grace period is over (what the timer runs on every node): how many. */
  sweep(): Promise<number>;
}

/** Runs `sweep` every `seconds` while the service lives (a run at a time; failures logged). */
function sweepEvery(ref: WeakRef<Pick<AccountDeletion, 'sweep'>>, seconds: number, logger: PluginApi['logger']): void {
  let running = false;
  const timer = setInterval(() => {
    const target = ref.deref();
    if (!target) {
      clearInterval(timer);
      return;
    }
    if (running) return;
    running = true;
    target
      .sweep()
      .catch((err: unknown) => logger.warn({ err }, 'account deletion sweep failed'))
      .finally(() => (running = false));
  }, seconds * 1000);
  timer.unref();
}

export const ACCOUNT_DELETION_SERVICE = 'accountDeletion';

/** The record of a deletion waiting for its grace period (key `deletion:<user id>`). */
export const DELETION_PREFIX = 'deletion:';

interface Deletion {
  user_id: string;
  /** Epoch milliseconds. */
  due: number;
  /** When it was asked for (epoch milliseconds). */
  scheduled?: number;
}

/** The first delivery channel that sends `kind`, or null: where the page's notices go. */
export function channelFor(api: PluginApi, kind: 'email' | 'sms'): string | null {
  const { channels } = api.services;
  return channels.ids().find((id) => channels.get(id)?.kinds.includes(kind)) ?? null;
}

/** Tells the user by email (when they have an address and a channel sends email); never fails the action. */
export async function noticeByEmail(
  api: PluginApi,
  user: UserRecord,
  subject: string,
  text: string,
  to: string | null = user.email,
): Promise<void> {
  const channel = channelFor(api, 'email');
  if (!to || !channel) return;
  await api.services.channels
    .enqueue(
      channel,
      { kind: 'email', to, subject, text },
      { expiresAt: new Date(api.services.clock.now().getTime() + 86_400_000), about: { userId: user.id } },
    )
    .catch(() => undefined);
}

/**
 * Changing the password and deleting the account (issue 27). Both need a recent sign-in to the
 * page, with the second factor when the user has one (`ActionGuard.mayChange`): the page sends
 * the browser through the hosted login again (`maxAge`) when the sign-in is older.
 */
export function accountActions(
  api: PluginApi,
  site: Site,
  guard: ActionGuard,
  opts: { graceSeconds: number; sweepSeconds: number; freshLogin: (r: SiteRequest) => Promise<void> },
): void {
  const base = site.href;
  const accounts = () => api.services.resolve<UserAccounts>('userAccounts');

  /** True when the sign-in may change the account now; else it answered. */
  const allowed = async (r: SiteRequest): Promise<boolean> => {
    const refusal = await guard.mayChange(r);
    if (!refusal) return true;
    if (refusal === 'stale' && r.req.method === 'GET') await opts.freshLogin(r);
    else site.refuse(r, 403, r.t.t(`myaccount.refused.${refusal}`));
    return false;
  };

  /** The method that takes a password (a knowledge factor with a setup). */
  const passwordMethod = async (r: SiteRequest): Promise<string | null> => {
    const listed = await accounts().methods(r.session.user, r.req);
    for (const m of listed) {
      const method = guard.methodOf(String(m.method));
      if (method?.enrollment && knowledgeOnly(method.amr) && method.verifyFields.includes('password')) return method.id;
    }
    return null;
  };

  site.get('/password', '', async (r) => {
    if (!(await allowed(r))) return;
    const { t } = r;
    site.render(
      r,
      t.t('myaccount.password.heading'),
      html`<section class="panel">
        <p>${t.t('myaccount.password.text')}</p>
        <form method="post" action="${base}/password">
          ${csrfField(r.session.csrf)}
          <input type="hidden" name="username" autocomplete="username" value="${r.session.user.username}" />
          <p>
            <label for="gh-new-password">${t.t('myaccount.password.new')}</label>
            <input
              id="gh-new-password"
              name="new_password"
              type="password"
              required
              maxlength="1024"
              autocomplete="new-password"
            />
          </p>
          <p>
            <label for="gh-confirm-password">${t.t('myaccount.password.confirm')}</label>
            <input
              id="gh-confirm-password"
              name="confirm_password"
              type="password"
              required
              maxlength="1024"
              autocomplete="new-password"
            />
          </p>
          <div class="actions"><button type="submit">${t.t('myaccount.password.submit')}</button></div>
        </form>
        <p><a href="${base}">${t.t('myaccount.back')}</a></p>
      </section>`,
    );
  });

  site.post('/password', '', async (r) => {
    if (!(await allowed(r))) return;
    const body = r.req.body as Record<string, unknown>;
    const next = body.new_password;
    if (typeof next !== 'string' || !next || next.length > 1024) {
      return site.refuse(r, 400, r.t.t('myaccount.password.missing'));
    }
    if (body.confirm_password !== next) return site.refuse(r, 400, r.t.t('myaccount.password.mismatch'));
    const method = await passwordMethod(r);
    if (!method) return site.refuse(r, 404, r.t.t('myaccount.add.no_such_method'));
    try {
      // The method enforces its policy; a replaced password ends every session and token of the
      // user (this page's sign-in too) and the core tells the user (the password notice).
      await api.services
        .resolve<MethodSetup>('methodSetup')
        .step('initiation', method, r.session.user, { password: next }, r.req);
    } catch (err) {
      if (!isProtocolError(err) || err.status >= 500) throw err;
      return site.refuse(r, err.status, `${r.t.t('myaccount.password.refused')} ${err.message}`);
    }
    await api.services.events.record({
      type: `${r.actor.via}.password_changed`,
      userId: r.session.user.id,
      ip: r.actor.ip,
      data: { actor: r.actor.userId },
    });
    site.done(r, '', 'password_changed');
  });

  // ─── deleting the account: disabled now, every row gone after the grace period ───

  site.get('/delete', '', async (r) => {
    if (!(await allowed(r))) return;
    const { t } = r;
    const days = Math.round(opts.graceSeconds / 86_400);
    site.render(
      r,
      t.t('myaccount.delete.heading'),
      html`<section class="panel">
        <p id="gh-delete-text">${t.t('myaccount.delete.text', { days })}</p>
        <form method="post" action="${base}/delete">
          ${csrfField(r.session.csrf)}
          <div class="actions">
            <button type="submit" class="danger" aria-describedby="gh-delete-text" id="gh-delete">
              ${t.t('myaccount.delete.submit')}
            </button>
          </div>
        </form>
        <p><a href="${base}">${t.t('myaccount.back')}</a></p>
      </section>`,
    );
  });

  /** Disables the user now and deletes them once the grace period is over: when. */
  const schedule = async (actor: Actor, user: UserRecord, req: IncomingMessage): Promise<Date> => {
    const due = api.services.clock.now().getTime() + opts.graceSeconds * 1000;
    // Kept a day past its due time: a node that was down at the due time still finds it.
    await api.records.put(
      `${DELETION_PREFIX}${user.id}`,
      { user_id: user.id, due, scheduled: api.services.clock.now().getTime() },
      { ttlSeconds: opts.graceSeconds + 86_400 },
    );
    // Disabled at once: every session and token ends.
    await accounts().disable(actor, user);
    await api.services.events.record({
      type: `${actor.via}.deletion_scheduled`,
      userId: user.id,
      ip: actor.ip,
      data: { actor: actor.userId, due: new Date(due).toISOString() },
    });
    const t = api.web.messages(req);
    await noticeByEmail(
      api,
      user,
      t.t('myaccount.delete.mail_subject'),
      t.t('myaccount.delete.mail_text', { name: user.username, when: when(due) }),
    );
    return new Date(due);
  };
  /**
   * The sweep: due deletions are consumed first, so exactly one node deletes each (a deletion
   * that fails is put back for the next sweep); a user an admin enabled again meanwhile is kept
   * (the deletion cancelled).
   */
  const actor: Actor = { via: 'account', userId: 'gatehouse-account', ip: null };
  const sweep = async (): Promise<number> => {
    const now = api.services.clock.now().getTime();
    let deleted = 0;
    for (const record of await api.records.list(DELETION_PREFIX, { limit: 100 })) {
      const data = record.data as unknown as Deletion;
      if (typeof data.due !== 'number' || data.due > now) continue;
      if (!(await api.records.consume(record.key))) continue;
      try {
        const user = await accounts().findById(data.user_id);
        if (!user) continue;
        // Enabled since (an admin kept the account), even if disabled again for another reason.
        const since = new Date(typeof data.scheduled === 'number' ? data.scheduled : data.due);
        const events = await api.services.history.recent({ userId: user.id, since, limit: 1000 });
        if (user.status === 'active' || events.some((e) => e.type.endsWith('.user_enabled'))) {
          await api.services.events.record({ type: 'account.deletion_cancelled', userId: user.id, data: {} });
          continue;
        }
        if (await accounts().deleteUser({ ...actor, userId: user.id }, user)) deleted++;
      } catch (err) {
        await api.records.put(record.key, record.data, { ttlSeconds: 86_400 });
        throw err;
      }
    }
    return deleted;
  };
  const deletion: AccountDeletion = { schedule, sweep };
  api.provide(ACCOUNT_DELETION_SERVICE, deletion);
  // Plugins have no stop hook: the timer holds the service weakly, and ends once the server
  // that holds it is gone.
  sweepEvery(new WeakRef(deletion), opts.sweepSeconds, api.logger);

  site.post('/delete', '', async (r) => {
    if (!(await allowed(r))) return;
    const due = await schedule(r.actor, r.session.user, r.req);
    await api.web.endSession(r.req, r.res);
    await site.signIn.signOut(r.req, r.res);
    site.render(
      r,
      r.t.t('myaccount.delete.heading'),
      html`<section class="panel">
        <p role="status" id="gh-deleted">${r.t.t('myaccount.delete.scheduled', { when: when(due) })}</p>
      </section>`,
    );
  });
}
