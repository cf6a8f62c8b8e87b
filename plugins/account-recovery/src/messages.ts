import type { PluginCatalogs } from '@gatehouse-auth/core';

/** The pages', emails' and SMS texts (`en` and `de` complete). */
export const MESSAGES: PluginCatalogs = {
  en: {
    'recovery.link': 'Forgot password?',
    'recovery.title': 'Reset your password',
    'recovery.intro':
      'Enter the username, email address or phone number of your account. If an account exists, we send it a code.',
    'recovery.identifier': 'Username, email or phone',
    'recovery.send': 'Send code',
    'recovery.sent': 'If an account exists for what you entered, we sent it a code. It expires in {minutes} minutes.',
    'recovery.code': 'Code',
    'recovery.check': 'Continue',
    'recovery.again': 'Start again',
    'recovery.error.CSRF': 'The form has expired. Please try again.',
    'recovery.error.CODE_INVALID': 'This code is not right. Check it and try again.',
    'recovery.error.TOO_MANY_ATTEMPTS': 'Too many wrong codes. Start the reset again.',
    'recovery.error.TOO_MANY_REQUESTS': 'Too many attempts. Try again in {seconds} seconds.',
    'recovery.error.RECOVERY_EXPIRED': 'This reset has expired or was used already. Start again.',
    'recovery.error.SECOND_FACTOR_UNAVAILABLE':
      'Your account has a second factor that cannot be used to reset the password here. Your password cannot be reset without it: ask your administrator.',
    'recovery.error.SECOND_FACTOR_REQUIRED': 'Confirm your second factor first.',
    'recovery.error.SECOND_FACTOR_FAILED':
      'The second factor was not confirmed. Without it, your password cannot be reset: try again, or ask your administrator.',
    'recovery.error.PASSWORD_MISMATCH': 'The two passwords differ.',
    'recovery.error.FIELD_MISSING': 'Enter a new password.',
    'recovery.error.PASSWORD_TOO_SHORT': 'The password is too short.',
    'recovery.error.PASSWORD_TOO_LONG': 'The password is too long.',
    'recovery.error.PASSWORD_TOO_COMMON':
      'This password appears in a list of common or breached passwords; choose a different one.',
    'recovery.error.other': 'The password was refused. Choose a different one.',
    'recovery.factor_title': 'Confirm it is you',
    'recovery.factor_text':
      'Your account has a second factor. Confirm it (your authenticator app, a backup code…) before you choose a new password.',
    'recovery.factor_cannot':
      'If you cannot use any of them, your password cannot be reset here: ask your administrator.',
    'recovery.factor_continue': 'Confirm my second factor',
    'recovery.password_title': 'Choose a new password',
    'recovery.password': 'New password',
    'recovery.password_confirm': 'New password again',
    'recovery.password_save': 'Save password',
    'recovery.done_title': 'Your password was changed',
    'recovery.done_text':
      'You were signed out everywhere. Sign in with your new password (and your second factor, if you have one).',
    'recovery.sign_in': 'Sign in',
    'recovery.mail.code_subject': 'Your password reset code',
    'recovery.mail.code_text':
      'Your code to reset your password is {code}. It expires in {minutes} minutes.\n\nIf you did not ask to reset your password, ignore this message: your password stays as it is.',
    'recovery.sms.code_text': 'Your password reset code is {code}. It expires in {minutes} minutes.',
    'recovery.mail.notice_subject': 'Your password was changed',
    'recovery.mail.notice_text':
      'The password of your account was reset on {when}, and you were signed out everywhere.\n\nIf this was not you, contact your administrator at once.',
    'recovery.sms.notice_text':
      'The password of your account was reset on {when}. If this was not you, contact your administrator at once.',
    'recovery.lost.link': 'Lost it? Use a backup code',
    'recovery.lost.title': 'Lost your second factor?',
    'recovery.lost.text':
      'Sign in with your password and one of your backup codes. Then you can remove the second factor you lost, and set up a new one.',
    'recovery.lost.start': 'Sign in with a backup code',
    'recovery.lost.choose': 'Which one did you lose? It is removed from your account; you are signed out everywhere.',
    'recovery.lost.remove': 'Remove {method}',
    'recovery.lost.none': 'You have no other second factor to remove.',
    'recovery.lost.done_title': 'Removed',
    'recovery.lost.done_text':
      '{method} was removed from your account, and you were signed out everywhere. Sign in and set up a new second factor now: your backup codes are few.',
    'recovery.error.LOGIN_FAILED': 'The sign-in did not complete. Try again.',
    'recovery.error.NOT_ENROLLED': 'This is not one of your second factors.',
    'recovery.mail.factor_subject': 'A second factor was removed from your account',
    'recovery.mail.factor_text':
      '{method} was removed from your account on {when}, after a sign-in with your password and a backup code. Set up a new second factor.\n\nIf this was not you, contact your administrator at once.',
    'recovery.sms.factor_text':
      '{method} was removed from your account on {when}. If this was not you, contact your administrator at once.',
  },
  de: {
    'recovery.link': 'Passwort vergessen?',
    'recovery.title': 'Passwort zurücksetzen',
    'recovery.intro':
      'Geben Sie den Benutzernamen, die E-Mail-Adresse oder die Telefonnummer Ihres Kontos ein. Wenn es ein Konto dazu gibt, senden wir ihm einen Code.',
    'recovery.identifier': 'Benutzername, E-Mail-Adresse oder Telefonnummer',
    'recovery.send': 'Code senden',
    'recovery.sent':
      'Wenn es zu Ihrer Eingabe ein Konto gibt, haben wir ihm einen Code gesendet. Er gilt {minutes} Minuten.',
    'recovery.code': 'Code',
    'recovery.check': 'Weiter',
    'recovery.again': 'Neu beginnen',
    'recovery.error.CSRF': 'Das Formular ist abgelaufen. Bitte versuchen Sie es erneut.',
    'recovery.error.CODE_INVALID': 'Dieser Code stimmt nicht. Prüfen Sie ihn und versuchen Sie es erneut.',
    'recovery.error.TOO_MANY_ATTEMPTS': 'Zu viele falsche Codes. Beginnen Sie das Zurücksetzen neu.',
    'recovery.error.TOO_MANY_REQUESTS': 'Zu viele Versuche. Versuchen Sie es in {seconds} Sekunden erneut.',
    'recovery.error.RECOVERY_EXPIRED':
      'Dieses Zurücksetzen ist abgelaufen oder wurde schon verwendet. Beginnen Sie neu.',
    'recovery.error.SECOND_FACTOR_UNAVAILABLE':
      'Ihr Konto hat einen zweiten Faktor, mit dem das Passwort hier nicht zurückgesetzt werden kann. Ohne ihn lässt sich Ihr Passwort nicht zurücksetzen: Wenden Sie sich an Ihre Administration.',
    'recovery.error.SECOND_FACTOR_REQUIRED': 'Bestätigen Sie zuerst Ihren zweiten Faktor.',
    'recovery.error.SECOND_FACTOR_FAILED':
      'Der zweite Faktor wurde nicht bestätigt. Ohne ihn lässt sich Ihr Passwort nicht zurücksetzen: Versuchen Sie es erneut oder wenden Sie sich an Ihre Administration.',
    'recovery.error.PASSWORD_MISMATCH': 'Die beiden Passwörter stimmen nicht überein.',
    'recovery.error.FIELD_MISSING': 'Geben Sie ein neues Passwort ein.',
    'recovery.error.PASSWORD_TOO_SHORT': 'Das Passwort ist zu kurz.',
    'recovery.error.PASSWORD_TOO_LONG': 'Das Passwort ist zu lang.',
    'recovery.error.PASSWORD_TOO_COMMON':
      'Dieses Passwort steht in einer Liste häufiger oder geleakter Passwörter; wählen Sie ein anderes.',
    'recovery.error.other': 'Das Passwort wurde abgelehnt. Wählen Sie ein anderes.',
    'recovery.factor_title': 'Bestätigen Sie, dass Sie es sind',
    'recovery.factor_text':
      'Ihr Konto hat einen zweiten Faktor. Bestätigen Sie ihn (Authenticator-App, Backup-Code …), bevor Sie ein neues Passwort wählen.',
    'recovery.factor_cannot':
      'Wenn Sie keinen davon verwenden können, lässt sich Ihr Passwort hier nicht zurücksetzen: Wenden Sie sich an Ihre Administration.',
    'recovery.factor_continue': 'Zweiten Faktor bestätigen',
    'recovery.password_title': 'Neues Passwort wählen',
    'recovery.password': 'Neues Passwort',
    'recovery.password_confirm': 'Neues Passwort wiederholen',
    'recovery.password_save': 'Passwort speichern',
    'recovery.done_title': 'Ihr Passwort wurde geändert',
    'recovery.done_text':
      'Sie wurden überall abgemeldet. Melden Sie sich mit Ihrem neuen Passwort an (und mit Ihrem zweiten Faktor, wenn Sie einen haben).',
    'recovery.sign_in': 'Anmelden',
    'recovery.mail.code_subject': 'Ihr Code zum Zurücksetzen des Passworts',
    'recovery.mail.code_text':
      'Ihr Code zum Zurücksetzen Ihres Passworts lautet {code}. Er gilt {minutes} Minuten.\n\nWenn Sie das Zurücksetzen nicht angefordert haben, ignorieren Sie diese Nachricht: Ihr Passwort bleibt unverändert.',
    'recovery.sms.code_text': 'Ihr Code zum Zurücksetzen des Passworts lautet {code}. Er gilt {minutes} Minuten.',
    'recovery.mail.notice_subject': 'Ihr Passwort wurde geändert',
    'recovery.mail.notice_text':
      'Das Passwort Ihres Kontos wurde am {when} zurückgesetzt, und Sie wurden überall abgemeldet.\n\nWenn Sie das nicht waren, wenden Sie sich sofort an Ihre Administration.',
    'recovery.sms.notice_text':
      'Das Passwort Ihres Kontos wurde am {when} zurückgesetzt. Wenn Sie das nicht waren, wenden Sie sich sofort an Ihre Administration.',
    'recovery.lost.link': 'Verloren? Mit einem Backup-Code weiter',
    'recovery.lost.title': 'Zweiten Faktor verloren?',
    'recovery.lost.text':
      'Melden Sie sich mit Ihrem Passwort und einem Ihrer Backup-Codes an. Danach können Sie den verlorenen zweiten Faktor entfernen und einen neuen einrichten.',
    'recovery.lost.start': 'Mit Backup-Code anmelden',
    'recovery.lost.choose':
      'Welchen haben Sie verloren? Er wird aus Ihrem Konto entfernt; Sie werden überall abgemeldet.',
    'recovery.lost.remove': '{method} entfernen',
    'recovery.lost.none': 'Sie haben keinen anderen zweiten Faktor, der entfernt werden könnte.',
    'recovery.lost.done_title': 'Entfernt',
    'recovery.lost.done_text':
      '{method} wurde aus Ihrem Konto entfernt, und Sie wurden überall abgemeldet. Melden Sie sich an und richten Sie jetzt einen neuen zweiten Faktor ein: Ihre Backup-Codes sind begrenzt.',
    'recovery.error.LOGIN_FAILED': 'Die Anmeldung wurde nicht abgeschlossen. Versuchen Sie es erneut.',
    'recovery.error.NOT_ENROLLED': 'Das ist keiner Ihrer zweiten Faktoren.',
    'recovery.mail.factor_subject': 'Ein zweiter Faktor wurde aus Ihrem Konto entfernt',
    'recovery.mail.factor_text':
      '{method} wurde am {when} aus Ihrem Konto entfernt, nach einer Anmeldung mit Ihrem Passwort und einem Backup-Code. Richten Sie einen neuen zweiten Faktor ein.\n\nWenn Sie das nicht waren, wenden Sie sich sofort an Ihre Administration.',
    'recovery.sms.factor_text':
      '{method} wurde am {when} aus Ihrem Konto entfernt. Wenn Sie das nicht waren, wenden Sie sich sofort an Ihre Administration.',
  },
};
