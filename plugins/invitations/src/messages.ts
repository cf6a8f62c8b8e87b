import type { PluginCatalogs } from '@gatehouse-auth/core';

/** The invitation pages' and email's texts (`api.messages`), English and German. */
export const MESSAGES: PluginCatalogs = {
  en: {
    'invite.title': 'Choose your password',
    'invite.intro': 'You were invited to sign in as {username}. Choose a password to finish setting up your account.',
    'invite.opening': 'Opening your invitation…',
    'invite.open': 'Open the invitation',
    'invite.noscript': 'This page needs JavaScript to read your invitation link.',
    'invite.password': 'Password',
    'invite.repeat': 'Password again',
    'invite.save': 'Set the password',
    'invite.mismatch': 'The two passwords differ.',
    'invite.refused': 'That password cannot be used: {reason}',
    'invite.done.title': 'Your account is ready',
    'invite.done.text': 'Your password is set and your email address is confirmed. Sign in to your app with it now.',
    'invite.done.link': 'Sign in',
    'invite.unknown.title': 'This invitation link is not valid',
    'invite.unknown.text': 'Check that you opened the whole link from the email, or ask for a new invitation.',
    'invite.used.title': 'This invitation was used already',
    'invite.used.text': 'The password was chosen with this link before. Sign in with it, or use "Forgot password?".',
    'invite.expired.title': 'This invitation has expired',
    'invite.expired.text': 'Invitation links work for a limited time. Ask the person who invited you for a new one.',
    'invite.revoked.title': 'This invitation was withdrawn',
    'invite.revoked.text': 'It can no longer be used. Ask the person who invited you for a new one.',
    'invite.csrf': 'The form expired. Open the link from the email again.',
    'invite.rate': 'Too many tries. Wait a few minutes, then try again.',
    'email.subject': 'Your invitation',
    'email.text':
      'Hello {username},\n\nyou are invited to set up your account. Open this link to choose your password (it works once, for {days} days):\n\n{link}\n\nIf you did not expect this invitation, ignore this email.',
  },
  de: {
    'invite.title': 'Wählen Sie Ihr Passwort',
    'invite.intro':
      'Sie wurden eingeladen, sich als {username} anzumelden. Wählen Sie ein Passwort, um Ihr Konto fertig einzurichten.',
    'invite.opening': 'Ihre Einladung wird geöffnet…',
    'invite.open': 'Einladung öffnen',
    'invite.noscript': 'Diese Seite braucht JavaScript, um Ihren Einladungslink zu lesen.',
    'invite.password': 'Passwort',
    'invite.repeat': 'Passwort wiederholen',
    'invite.save': 'Passwort festlegen',
    'invite.mismatch': 'Die beiden Passwörter sind verschieden.',
    'invite.refused': 'Dieses Passwort lässt sich nicht verwenden: {reason}',
    'invite.done.title': 'Ihr Konto ist bereit',
    'invite.done.text':
      'Ihr Passwort ist festgelegt und Ihre E-Mail-Adresse bestätigt. Melden Sie sich jetzt damit bei Ihrer App an.',
    'invite.done.link': 'Anmelden',
    'invite.unknown.title': 'Dieser Einladungslink ist nicht gültig',
    'invite.unknown.text':
      'Prüfen Sie, ob Sie den ganzen Link aus der E-Mail geöffnet haben, oder bitten Sie um eine neue Einladung.',
    'invite.used.title': 'Diese Einladung wurde bereits verwendet',
    'invite.used.text':
      'Mit diesem Link wurde schon ein Passwort gewählt. Melden Sie sich damit an oder nutzen Sie „Passwort vergessen?“.',
    'invite.expired.title': 'Diese Einladung ist abgelaufen',
    'invite.expired.text':
      'Einladungslinks gelten nur eine begrenzte Zeit. Bitten Sie die Person, die Sie eingeladen hat, um eine neue.',
    'invite.revoked.title': 'Diese Einladung wurde zurückgezogen',
    'invite.revoked.text':
      'Sie lässt sich nicht mehr verwenden. Bitten Sie die Person, die Sie eingeladen hat, um eine neue.',
    'invite.csrf': 'Das Formular ist abgelaufen. Öffnen Sie den Link aus der E-Mail erneut.',
    'invite.rate': 'Zu viele Versuche. Warten Sie einige Minuten und versuchen Sie es dann erneut.',
    'email.subject': 'Ihre Einladung',
    'email.text':
      'Hallo {username},\n\nSie wurden eingeladen, Ihr Konto einzurichten. Öffnen Sie diesen Link, um Ihr Passwort zu wählen (er funktioniert einmal, {days} Tage lang):\n\n{link}\n\nWenn Sie diese Einladung nicht erwartet haben, ignorieren Sie diese E-Mail.',
  },
};

/** The invitation email in the user's language (`de-DE` → `de`), English otherwise. */
export function emailText(
  locale: string,
  vars: { link: string; days: number; username: string },
): { subject: string; text: string } {
  const language = locale.toLowerCase().split(/[-_]/)[0]!;
  const catalog = MESSAGES[language] ?? MESSAGES.en!;
  const fill = (text: string) =>
    text.replace(/\{(link|days|username)\}/g, (_m, name: 'link' | 'days' | 'username') => String(vars[name]));
  return {
    subject: catalog['email.subject'] ?? MESSAGES.en!['email.subject']!,
    text: fill(catalog['email.text'] ?? MESSAGES.en!['email.text']!),
  };
}
