import type { ListedCredential, RequestFacts, SecurityEvent } from '@gatehouse-auth/core';

/** What users are told about: every security event (SECURITY-CHECKLIST §7 TOTP 1, §8.6; ASVS 6.3.5). */
export type SecurityNotice = SecurityEvent['type'];

export interface NoticeFacts {
  method: string;
  request: RequestFacts;
  clientId: string;
  /** When it happened (the event's time); when it is sent otherwise. */
  at?: Date;
  /** password_changed: the ways to sign in set up since the last sign-in began, and when that was. */
  setUpSince?: { since: Date | null; credentials: ListedCredential[] };
}

/** The languages the notices speak: the sign-in's `ui_locales`, then the browser's, pick one. */
export const NOTICE_LOCALES = ['en', 'de'];

export const SUBJECT: Record<string, Record<SecurityNotice, string>> = {
  en: {
    code_reuse: 'Sign-in alert: a one-time code was used again',
    sign_in_blocked: 'Sign-in alert: a sign-in to your account was blocked',
    sign_in_challenged: 'Sign-in alert: a sign-in needed an extra check',
    password_changed: 'Security alert: your password was changed',
  },
  de: {
    code_reuse: 'Anmeldewarnung: ein Einmalcode wurde erneut verwendet',
    sign_in_blocked: 'Anmeldewarnung: eine Anmeldung bei Ihrem Konto wurde blockiert',
    sign_in_challenged: 'Anmeldewarnung: eine Anmeldung brauchte eine zusätzliche Prüfung',
    password_changed: 'Sicherheitswarnung: Ihr Passwort wurde geändert',
  },
};

const minute = (at: Date) => `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** What was set up since the last sign-in: what an attacker who had the password may have left behind. */
function setUpSince(facts: NoticeFacts, de: boolean): string {
  const listed = facts.setUpSince;
  if (!listed) return '';
  const since = listed.since
    ? de
      ? `seit Beginn Ihrer letzten Anmeldung (${minute(listed.since)})`
      : `since your last sign-in began (${minute(listed.since)})`
    : de
      ? 'bisher'
      : 'so far';
  if (!listed.credentials.length) {
    return de
      ? ` ${since[0]!.toUpperCase()}${since.slice(1)} wurde kein anderer Anmeldeweg eingerichtet.`
      : ` No other way to sign in was set up ${since}.`;
  }
  const lines = listed.credentials.map((c) => {
    const label = c.label ? ` "${c.label.slice(0, 60)}"` : '';
    return de
      ? `- ${c.method}${label}, eingerichtet ${minute(c.createdAt)}`
      : `- ${c.method}${label}, set up ${minute(c.createdAt)}`;
  });
  return de
    ? ` Anmeldewege, die ${since} eingerichtet wurden:\n${lines.join('\n')}\nWenn Sie einen davon nicht eingerichtet haben, entfernen Sie ihn jetzt: Er funktioniert auch mit dem neuen Passwort.`
    : ` Ways to sign in set up ${since}:\n${lines.join('\n')}\nIf you did not set one of them up, remove it now: it still works with the new password.`;
}

export function text(notice: SecurityNotice, facts: NoticeFacts, at: Date, locale: string): string {
  const when = minute(at);
  if (locale === 'de') {
    const where = facts.request.ip ? ` von ${facts.request.ip}` : '';
    const tail = 'Wenn Sie das nicht waren, ändern Sie Ihr Passwort und informieren Sie Ihre Administration.';
    switch (notice) {
      case 'code_reuse':
        return `Jemand hat am ${when}${where} versucht, sich mit einem bereits verwendeten ${facts.method}-Code bei Ihrem Konto anzumelden. ${tail}`;
      case 'sign_in_blocked':
        return `Eine Anmeldung bei Ihrem Konto (${facts.method}) am ${when}${where} wurde von unseren Sicherheitsprüfungen blockiert. Wenn Sie es waren, warten Sie eine Weile und versuchen Sie es erneut: Ein Gerät, mit dem Sie sich schon angemeldet haben, wird von Fehlversuchen anderswo nicht aufgehalten. ${tail}`;
      case 'sign_in_challenged':
        return `Eine Anmeldung bei Ihrem Konto am ${when}${where} kam von einem neuen Gerät oder Ort und brauchte einen zusätzlichen Prüfschritt. ${tail}`;
      case 'password_changed':
        return `Das Passwort Ihres Kontos wurde am ${when}${where} geändert, und jede Sitzung und App, die mit dem alten angemeldet war, wurde abgemeldet.${setUpSince(facts, true)} Wenn Sie es nicht geändert haben, informieren Sie Ihre Administration.`;
    }
  }
  const where = facts.request.ip ? ` from ${facts.request.ip}` : '';
  const tail = 'If this was not you, change your password and tell your administrator.';
  switch (notice) {
    case 'code_reuse':
      return `Someone tried to sign in to your account at ${when}${where} with a ${facts.method} code that had already been used. ${tail}`;
    case 'sign_in_blocked':
      return `A sign-in to your account (${facts.method}) at ${when}${where} was blocked by our security checks. If it was you, wait a while and try again: a device you signed in from before is not held back by failed attempts made elsewhere. ${tail}`;
    case 'sign_in_challenged':
      return `A sign-in to your account at ${when}${where} came from a new device or place and needed an extra verification step. ${tail}`;
    case 'password_changed':
      return `The password of your account was changed at ${when}${where}, and every session and app signed in with the old one was signed out.${setUpSince(facts, false)} If you did not change it, tell your administrator.`;
  }
}
