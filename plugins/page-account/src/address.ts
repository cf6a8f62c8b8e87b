import { html, isProtocolError, type PluginApi, type UserAccounts, type UserRecord } from '@gatehouse-auth/core';
import { csrfField, type Site, type SiteRequest } from '@gatehouse-auth/site-kit';
import { channelFor } from './actions.js';
import type { ActionGuard } from './guard.js';

/** The addresses a user changes on the page, and the message kind that reaches each. */
const FIELDS = { email: 'email', phone: 'sms' } as const;
type Field = keyof typeof FIELDS;

/** Wrong codes before the change starts over. */
export const MAX_CODE_ATTEMPTS = 5;
const CODE_DIGITS = 6;

interface PendingChange {
  address: string;
  mac: string;
  attempts: number;
}

/**
 * Changing the email address or phone number (issue 27, security checklist 12.6): the new
 * address is proven by a single-use code sent there (kept as a MAC under the server key in the
 * plugin's records, `codeTtlSeconds`, consumed once, `MAX_CODE_ATTEMPTS` wrong codes end it),
 * then it replaces the old one (`UserAccounts.changeAddress`), is marked verified, and the old
 * address is told. Whether the new address belongs to someone else is said only after the code
 * came back: only its owner learns it.
 */
export function addressRoutes(
  api: PluginApi,
  site: Site,
  guard: ActionGuard,
  opts: { codeTtlSeconds: number; freshLogin: (r: SiteRequest) => Promise<void> },
): void {
  const base = site.href;
  const accounts = () => api.services.resolve<UserAccounts>('userAccounts');
  // Codes sent per user: a page cannot be made to text or mail anyone without bound.
  const sends = api.web.limit('address-codes', 5, 3600);
  const key = (user: UserRecord, field: Field) => `address:${user.id}:${field}`;
  const macOf = (user: UserRecord, field: Field, address: string, code: string) =>
    api.services.secrets.mac(`account-address:${user.id}:${field}:${address}:${code}`);

  /** The field of the path, or null once a 404 page said so. */
  const fieldOf = (r: SiteRequest): Field | null => {
    const field = String(r.req.params.field);
    if (field === 'email' || field === 'phone') return field;
    site.refuse(r, 404, r.t.t('myaccount.address.no_such_field'));
    return null;
  };

  const allowed = async (r: SiteRequest): Promise<boolean> => {
    const refusal = await guard.mayChange(r);
    if (!refusal) return true;
    if (refusal === 'stale' && r.req.method === 'GET') await opts.freshLogin(r);
    else site.refuse(r, 403, r.t.t(`myaccount.refused.${refusal}`));
    return false;
  };

  const codeForm = (r: SiteRequest, field: Field, status = 200, problem?: string) =>
    site.render(
      r,
      r.t.t(`myaccount.address.heading_${field}`),
      html`<section class="panel">
        ${problem ? html`<p class="notice error" role="alert">${problem}</p>` : ''}
        <p role="status">${r.t.t('myaccount.address.sent')}</p>
        <form method="post" action="${base}/address/${field}/verify">
          ${csrfField(r.session.csrf)}
          <p>
            <label for="gh-code">${r.t.t('myaccount.add.code')}</label>
            <input id="gh-code" name="code" required maxlength="16" inputmode="numeric" autocomplete="one-time-code" />
          </p>
          <div class="actions"><button type="submit">${r.t.t('myaccount.add.confirm')}</button></div>
        </form>
        <p><a href="${base}">${r.t.t('myaccount.back')}</a></p>
      </section>`,
      status,
    );

  site.get('/address/:field', '', async (r) => {
    const field = fieldOf(r);
    if (!field || !(await allowed(r))) return;
    const { t } = r;
    const current = r.session.user[field];
    site.render(
      r,
      t.t(`myaccount.address.heading_${field}`),
      html`<section class="panel">
        <p>${current ? t.t('myaccount.address.current', { address: current }) : t.t('myaccount.address.none')}</p>
        <form method="post" action="${base}/address/${field}/start">
          ${csrfField(r.session.csrf)}
          <p>
            <label for="gh-address">${t.t(`myaccount.address.new_${field}`)}</label>
            <input
              id="gh-address"
              name="address"
              required
              maxlength="255"
              type="${field === 'email' ? 'email' : 'tel'}"
              autocomplete="${field === 'email' ? 'email' : 'tel'}"
            />
          </p>
          <p class="muted">${t.t('myaccount.address.how')}</p>
          <div class="actions"><button type="submit">${t.t('myaccount.address.send')}</button></div>
        </form>
        <p><a href="${base}">${t.t('myaccount.back')}</a></p>
      </section>`,
    );
  });

  site.post('/address/:field/start', '', async (r) => {
    const field = fieldOf(r);
    if (!field || !(await allowed(r))) return;
    const raw = (r.req.body as Record<string, unknown>).address;
    const address =
      typeof raw === 'string' && raw.length <= 255 ? (field === 'email' ? raw.trim().toLowerCase() : raw.trim()) : '';
    const valid =
      field === 'email' ? /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/.test(address) : /^\+[1-9][0-9]{6,14}$/.test(address);
    if (!valid) return site.refuse(r, 400, r.t.t(`myaccount.address.invalid_${field}`));
    if (address === r.session.user[field]) return site.refuse(r, 400, r.t.t('myaccount.address.same'));
    const channel = channelFor(api, FIELDS[field]);
    if (!channel) return site.refuse(r, 503, r.t.t('myaccount.address.no_channel'));
    const wait = await sends.hit(r.session.user.id);
    if (wait !== null) {
      r.res.set('Retry-After', String(wait));
      return site.refuse(r, 429, r.t.t('myaccount.address.too_many_sends'));
    }
    const code = api.services.crypto.randomDigits(CODE_DIGITS);
    const pending: PendingChange = { address, mac: macOf(r.session.user, field, address, code), attempts: 0 };
    await api.records.put(key(r.session.user, field), { ...pending }, { ttlSeconds: opts.codeTtlSeconds });
    const minutes = Math.max(1, Math.round(opts.codeTtlSeconds / 60));
    const text = r.t.t('myaccount.address.code_text', { code, minutes });
    await api.services.channels.enqueue(
      channel,
      {
        kind: FIELDS[field],
        to: address,
        ...(field === 'email' ? { subject: r.t.t('myaccount.address.code_subject') } : {}),
        text,
      },
      {
        expiresAt: new Date(api.services.clock.now().getTime() + opts.codeTtlSeconds * 1000),
        secrets: [code],
        about: { userId: r.session.user.id },
      },
    );
    codeForm(r, field);
  });

  site.post('/address/:field/verify', '', async (r) => {
    const field = fieldOf(r);
    if (!field || !(await allowed(r))) return;
    const user = r.session.user;
    const code = (r.req.body as Record<string, unknown>).code;
    const record = await api.records.get(key(user, field));
    if (!record) return site.refuse(r, 400, r.t.t('myaccount.address.expired'));
    const pending = record.data as unknown as PendingChange;
    const presented = typeof code === 'string' && code.length <= 16 ? code.trim() : '';
    const right =
      presented !== '' && api.services.crypto.safeEqual(macOf(user, field, pending.address, presented), pending.mac);
    if (!right) {
      const attempts = pending.attempts + 1;
      if (attempts >= MAX_CODE_ATTEMPTS) {
        await api.records.delete(key(user, field));
        return site.refuse(r, 429, r.t.t('myaccount.address.too_many_attempts'));
      }
      const left = Math.max(
        1,
        Math.round(((record.expiresAt?.getTime() ?? 0) - api.services.clock.now().getTime()) / 1000),
      );
      await api.records.put(key(user, field), { ...pending, attempts }, { ttlSeconds: left });
      return codeForm(r, field, 401, r.t.t('myaccount.address.wrong_code'));
    }
    // Single use: of two requests with the right code, one consumes it.
    if (!(await api.records.consume(key(user, field)))) return site.refuse(r, 400, r.t.t('myaccount.address.expired'));
    const old = user[field];
    try {
      await accounts().changeAddress(r.actor, user, field, pending.address);
    } catch (err) {
      if (isProtocolError(err) && err.status === 409) return site.refuse(r, 409, r.t.t('myaccount.address.taken'));
      throw err;
    }
    await api.services.accounts.markVerified(user.id, FIELDS[field], pending.address);
    const oldChannel = channelFor(api, FIELDS[field]);
    if (old && oldChannel) {
      await api.services.channels
        .enqueue(
          oldChannel,
          {
            kind: FIELDS[field],
            to: old,
            ...(field === 'email' ? { subject: r.t.t('myaccount.address.notice_subject') } : {}),
            text: r.t.t(`myaccount.address.notice_${field}`, { name: user.username }),
          },
          { expiresAt: new Date(api.services.clock.now().getTime() + 86_400_000), about: { userId: user.id } },
        )
        .catch(() => undefined);
    }
    site.done(r, '', `${field}_changed`);
  });
}
