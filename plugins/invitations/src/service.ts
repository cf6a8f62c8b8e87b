import {
  ApiError,
  EMAIL_PATTERN,
  USERNAME_PATTERN,
  type Actor,
  type JsonObject,
  type PluginApi,
  type UserAccounts,
  type UserRecord,
} from '@gatehouse-auth/core';
import { emailText } from './messages.js';

/** The plugin's options, as the service uses them. */
export interface InvitationOptions {
  email_channel: string;
  ttl_days: number;
}

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

/** An invitation as the admin API answers it: never its link's token. */
export interface Invitation {
  invite_id: string;
  user_id: string;
  email: string;
  client_id: string | null;
  sign_in_url: string | null;
  status: InvitationStatus;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
}

export interface InviteInput {
  email: string;
  username?: string | undefined;
  client_id?: string | undefined;
  sign_in_url?: string | undefined;
  locale?: string | undefined;
}

/** What a link's token opens: the invitation, its user, or why there is none. */
export type Opened =
  | { ok: true; invitation: Invitation; user: UserRecord }
  | { ok: false; reason: 'unknown' | 'used' | 'revoked' | 'expired' };

/**
 * The service other plugins resolve (`services.resolve<InvitationsService>('invitations')`):
 * the console's invite button, compat-cidaas's invite-info call.
 */
export interface InvitationsService {
  /** Invites by email (creates the user when there is none) and sends the link; answers the invitation. */
  invite(actor: Actor, input: InviteInput): Promise<Invitation>;
  get(inviteId: string): Promise<Invitation | null>;
  /** The user's invitations, newest first. */
  ofUser(userId: string): Promise<Invitation[]>;
  /** Revokes a pending invitation (its link stops working); null when there is none. */
  revoke(actor: Actor, inviteId: string): Promise<Invitation | null>;
  /** What an app may learn from an invitation id alone (cidaas's invite info): no secret, the address masked. */
  info(inviteId: string): Promise<JsonObject | null>;
}

/** A password-less account's password method: an invitation is for a first password only. */
export const PASSWORD_METHOD = 'PASSWORD';

const DAY = 24 * 3600;
/** How long an invitation is kept after it expired (for its status and the link's clear page). */
const KEPT_SECONDS = 30 * DAY;

const ID = /^[A-Za-z0-9_-]{16,64}$/;

/**
 * Invitations in the plugin's records: `inv:<id>` the invitation, `user:<user>:<id>` an index
 * by user, `token:<sha256>` the link's live single-use token (consumed once, gone after the
 * expiry), `seen:<sha256>` which invitation a token was, kept to tell a used link from an
 * unknown one. The token itself is stored nowhere: only its SHA-256 (256 random bits).
 */
export class Invitations implements InvitationsService {
  constructor(
    private readonly api: PluginApi,
    private readonly options: InvitationOptions,
  ) {}

  private get accounts() {
    return this.api.services.resolve<UserAccounts>('userAccounts');
  }

  private now() {
    return this.api.services.clock.now();
  }

  private hash(token: string) {
    return this.api.services.crypto.sha256(`invitation:${token}`);
  }

  private withStatus(data: JsonObject): Invitation {
    const invitation = data as unknown as Invitation;
    if (invitation.status === 'pending' && new Date(invitation.expires_at) <= this.now()) {
      return { ...invitation, status: 'expired' };
    }
    return invitation;
  }

  async get(inviteId: string): Promise<Invitation | null> {
    if (!ID.test(inviteId)) return null;
    const record = await this.api.records.get(`inv:${inviteId}`);
    return record ? this.withStatus(record.data) : null;
  }

  async ofUser(userId: string): Promise<Invitation[]> {
    const index = await this.api.records.list(`user:${userId}:`, { limit: 100 });
    const out: Invitation[] = [];
    for (const entry of index) {
      const invitation = await this.get(String(entry.data.invite_id));
      if (invitation) out.push(invitation);
    }
    return out.sort((a, b) => b.created_at.localeCompare(a.created_at));
  }

  private async save(invitation: Invitation): Promise<void> {
    const left = Math.max(1, Math.ceil((new Date(invitation.expires_at).getTime() - this.now().getTime()) / 1000));
    await this.api.records.put(`inv:${invitation.invite_id}`, invitation as unknown as JsonObject, {
      ttlSeconds: left + KEPT_SECONDS,
    });
  }

  /** The user the invitation is for: the one with this email, else a new one. */
  private async userFor(actor: Actor, email: string, username: string | undefined): Promise<UserRecord> {
    const existing = await this.api.services.users.findByIdentifier(email);
    if (existing) {
      if (existing.email !== email) {
        throw new ApiError(409, 'USER_EXISTS', 'a user signs in with this address but has another email', {
          field: 'email',
        });
      }
      if (existing.status !== 'active') throw new ApiError(409, 'USER_NOT_ACTIVE', 'the user is disabled or locked');
      return existing;
    }
    return this.accounts.createUser(actor, { username: username ?? email, email });
  }

  async invite(actor: Actor, input: InviteInput): Promise<Invitation> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL_PATTERN.test(email)) {
      throw new ApiError(400, 'INVALID_FIELD', 'email must be an email address', { field: 'email' });
    }
    if (input.username !== undefined && !USERNAME_PATTERN.test(input.username)) {
      throw new ApiError(400, 'INVALID_FIELD', 'username must be 1-255 letters, digits or ._@+-', {
        field: 'username',
      });
    }
    const signInUrl = input.sign_in_url ? await this.checkSignInUrl(input.client_id, input.sign_in_url) : null;
    if (input.client_id && !(await this.appExists(input.client_id))) {
      throw new ApiError(400, 'INVALID_FIELD', 'client_id names no app', { field: 'client_id' });
    }
    const user = await this.userFor(actor, email, input.username);
    if ((await this.api.services.credentials(user.id, PASSWORD_METHOD).list()).length > 0) {
      throw new ApiError(
        409,
        'ALREADY_SET_UP',
        'the user has a password already: an invitation sets a first one (use password recovery)',
      );
    }
    // One live link per user: a new invitation revokes the ones before it.
    for (const earlier of await this.ofUser(user.id)) {
      if (earlier.status === 'pending') await this.revoke(actor, earlier.invite_id);
    }

    const { crypto } = this.api.services;
    const token = crypto.randomToken(32);
    const created = this.now();
    const expires = new Date(created.getTime() + this.options.ttl_days * DAY * 1000);
    const invitation: Invitation = {
      invite_id: crypto.randomToken(16),
      user_id: user.id,
      email,
      client_id: input.client_id ?? null,
      sign_in_url: signInUrl,
      status: 'pending',
      created_at: created.toISOString(),
      expires_at: expires.toISOString(),
      accepted_at: null,
    };
    const ttl = this.options.ttl_days * DAY;
    await this.save(invitation);
    await this.api.records.put(
      `user:${user.id}:${invitation.invite_id}`,
      { invite_id: invitation.invite_id },
      {
        ttlSeconds: ttl + KEPT_SECONDS,
      },
    );
    const hash = this.hash(token);
    await this.api.records.put(`token:${hash}`, { invite_id: invitation.invite_id }, { ttlSeconds: ttl });
    await this.api.records.put(`seen:${hash}`, { invite_id: invitation.invite_id }, { ttlSeconds: ttl + KEPT_SECONDS });

    // The token travels in the link's fragment: browsers never send it to a server, so it is in
    // no access log and no Referer (docs/decisions/0048).
    const link = `${this.api.web.url('/invitations/accept')}#${token}`;
    const locale = input.locale ?? (await this.accounts.profile(user.id)).locale ?? 'en';
    const message = emailText(locale, { link, days: this.options.ttl_days, username: user.username });
    await this.api.services.channels.enqueue(
      this.options.email_channel,
      { kind: 'email', to: email, subject: message.subject, text: message.text },
      { expiresAt: expires, secrets: [token, link], about: { userId: user.id, method: null, key: 'invitation' } },
    );
    await this.event('invitation.created', user.id, actor, invitation.invite_id);
    return invitation;
  }

  async revoke(actor: Actor, inviteId: string): Promise<Invitation | null> {
    const invitation = await this.get(inviteId);
    if (!invitation) return null;
    if (invitation.status !== 'pending') return invitation;
    const revoked: Invitation = { ...invitation, status: 'revoked' };
    await this.save(revoked);
    await this.event('invitation.revoked', invitation.user_id, actor, inviteId);
    return revoked;
  }

  async info(inviteId: string): Promise<JsonObject | null> {
    const invitation = await this.get(inviteId);
    if (!invitation) return null;
    return {
      invite_id: invitation.invite_id,
      email: maskEmail(invitation.email),
      status: invitation.status,
      client_id: invitation.client_id,
      expires_at: invitation.expires_at,
    };
  }

  /** What a link's token opens now (without using it). */
  async open(token: unknown): Promise<Opened> {
    if (typeof token !== 'string' || token.length < 20 || token.length > 100) return { ok: false, reason: 'unknown' };
    const hash = this.hash(token);
    const seen = await this.api.records.get(`seen:${hash}`);
    const invitation = seen ? await this.get(String(seen.data.invite_id)) : null;
    if (!invitation) return { ok: false, reason: 'unknown' };
    if (invitation.status === 'accepted') return { ok: false, reason: 'used' };
    if (invitation.status === 'revoked') return { ok: false, reason: 'revoked' };
    if (invitation.status === 'expired') return { ok: false, reason: 'expired' };
    if (!(await this.api.records.get(`token:${hash}`))) return { ok: false, reason: 'used' };
    const user = await this.api.services.users.findById(invitation.user_id);
    if (!user || user.status !== 'active') return { ok: false, reason: 'revoked' };
    // A password set meanwhile (by an admin, another way): the invitation has done its work.
    if ((await this.api.services.credentials(user.id, PASSWORD_METHOD).list()).length > 0) {
      return { ok: false, reason: 'used' };
    }
    return { ok: true, invitation, user };
  }

  /**
   * Uses the token once (the database picks one winner), then runs `setPassword`; a refusal of
   * the password puts the token back for another try. On success the invitation is accepted and
   * the address is marked verified: the link sent there proved it.
   */
  async accept(token: string, setPassword: (user: UserRecord) => Promise<void>): Promise<Opened> {
    const opened = await this.open(token);
    if (!opened.ok) return opened;
    const hash = this.hash(token);
    const live = await this.api.records.consume(`token:${hash}`);
    if (!live) return { ok: false, reason: 'used' };
    try {
      await setPassword(opened.user);
    } catch (err) {
      const left = Math.ceil((new Date(opened.invitation.expires_at).getTime() - this.now().getTime()) / 1000);
      if (left > 0) await this.api.records.add(`token:${hash}`, live.data, { ttlSeconds: left });
      throw err;
    }
    const accepted: Invitation = { ...opened.invitation, status: 'accepted', accepted_at: this.now().toISOString() };
    await this.save(accepted);
    if (opened.user.email === opened.invitation.email) {
      await this.api.services.accounts.markVerified(opened.user.id, 'email', opened.invitation.email);
    }
    await this.event('invitation.accepted', opened.user.id, null, accepted.invite_id);
    return { ok: true, invitation: accepted, user: opened.user };
  }

  private async appExists(clientId: string) {
    return (await this.accounts.overview()).apps.some((app) => app.clientId === clientId);
  }

  /** Where the done page sends the user: an http(s) URL on the origin of one of the app's redirect URIs. */
  private async checkSignInUrl(clientId: string | undefined, url: string): Promise<string> {
    const app = clientId ? (await this.accounts.overview()).apps.find((a) => a.clientId === clientId) : undefined;
    const parsed = URL.canParse(url) ? new URL(url) : null;
    const origins = (app?.redirectUris ?? []).flatMap((u) => (URL.canParse(u) ? [new URL(u).origin] : []));
    if (!parsed || !/^https?:$/.test(parsed.protocol) || !origins.includes(parsed.origin)) {
      throw new ApiError(400, 'INVALID_FIELD', "sign_in_url must be on the origin of one of the app's redirect URIs", {
        field: 'sign_in_url',
      });
    }
    return parsed.href;
  }

  private event(type: string, userId: string, actor: Actor | null, inviteId: string) {
    return this.api.services.events.record({
      type,
      userId,
      ip: actor?.ip ?? null,
      data: { invite_id: inviteId, ...(actor ? { actor: actor.userId, via: actor.via } : {}) },
    });
  }
}

/** `dora@example.com` → `d***@example.com`. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  return at > 0 ? `${email[0]}***${email.slice(at)}` : '***';
}
