import type { PluginCatalogs } from '@gatehouse-auth/core';

/**
 * The texts of the page's setup screens (enrollment at a login, required actions), this plugin's
 * own catalogs (`api.messages`); the login page's other texts are the core's (`login.…`).
 */
export const MESSAGES: PluginCatalogs = {
  en: {
    'enroll.title': 'Set up a way to sign in to {app}',
    'enroll.intro': '{app} asks for one of these at this step, and you have none set up yet. Choose one to set up now.',
    'enroll.method': 'Way to sign in',
    'enroll.start': 'Set up',
    'enroll.address.label': 'Where to send the code',
    'enroll.address.help': 'A phone number with its country code (+49 …) or an email address, as this method sends.',
    'enroll.address.send': 'Send the code',
    'enroll.qr': 'Scan this QR code with your authenticator app.',
    'enroll.secret': 'Or type this key into the app:',
    'enroll.sent': 'We sent a code to {medium}.',
    'enroll.code': 'Code',
    'enroll.confirm': 'Confirm',
    'enroll.device': 'Scan this QR code with the app on your device, then continue.',
    'enroll.device.continue': 'My device is connected, continue',
    'enroll.again': 'Start over',
    'enroll.none.title': 'Nothing can be set up here',
    'enroll.none.text':
      'None of the ways to sign in this step asks for can be set up during this sign-in. Ask the administrator of the app.',
    'enroll.error.code': 'That code is not right. Try again.',
    'enroll.error.attempts': 'Too many wrong codes. Start the setup again.',
    'enroll.error.not_started': 'Start the setup first.',
    'enroll.error.not_allowed': 'This cannot be set up during this sign-in.',
    'enroll.error.failed': 'That did not work. Try again.',
    'enroll.error.csrf': 'The form expired. Go back and try again.',
    'enroll.error.rate': 'Too many tries. Wait a few minutes, then try again.',
    'required.password.title': 'Choose a new password',
    'required.password.intro': 'Your administrator asks you to choose a new password before you continue to {app}.',
    'required.password.new': 'New password',
    'required.password.repeat': 'New password again',
    'required.password.save': 'Save and continue',
    'required.password.mismatch': 'The two passwords differ.',
    'required.password.refused': 'That password cannot be used: {reason}',
    'required.factor.title': 'Set up a second factor',
    'required.factor.intro':
      'Your administrator asks you to set up a second way to prove it is you before you continue to {app}.',
    'required.factor.none': 'No second factor can be set up during this sign-in. Ask your administrator for help.',
  },
  de: {
    'enroll.title': 'Eine Anmeldemethode für {app} einrichten',
    'enroll.intro':
      '{app} verlangt in diesem Schritt eine dieser Methoden, und Sie haben noch keine eingerichtet. Wählen Sie eine, um sie jetzt einzurichten.',
    'enroll.method': 'Anmeldemethode',
    'enroll.start': 'Einrichten',
    'enroll.address.label': 'Wohin der Code gesendet wird',
    'enroll.address.help': 'Eine Telefonnummer mit Ländervorwahl (+49 …) oder eine E-Mail-Adresse, je nach Methode.',
    'enroll.address.send': 'Code senden',
    'enroll.qr': 'Scannen Sie diesen QR-Code mit Ihrer Authenticator-App.',
    'enroll.secret': 'Oder geben Sie diesen Schlüssel in der App ein:',
    'enroll.sent': 'Wir haben einen Code an {medium} gesendet.',
    'enroll.code': 'Code',
    'enroll.confirm': 'Bestätigen',
    'enroll.device': 'Scannen Sie diesen QR-Code mit der App auf Ihrem Gerät und fahren Sie dann fort.',
    'enroll.device.continue': 'Mein Gerät ist verbunden, weiter',
    'enroll.again': 'Von vorn beginnen',
    'enroll.none.title': 'Hier lässt sich nichts einrichten',
    'enroll.none.text':
      'Keine der Anmeldemethoden, die dieser Schritt verlangt, lässt sich während dieser Anmeldung einrichten. Wenden Sie sich an den Administrator der App.',
    'enroll.error.code': 'Dieser Code stimmt nicht. Versuchen Sie es erneut.',
    'enroll.error.attempts': 'Zu viele falsche Codes. Beginnen Sie die Einrichtung von vorn.',
    'enroll.error.not_started': 'Beginnen Sie zuerst die Einrichtung.',
    'enroll.error.not_allowed': 'Das lässt sich während dieser Anmeldung nicht einrichten.',
    'enroll.error.failed': 'Das hat nicht geklappt. Versuchen Sie es erneut.',
    'enroll.error.csrf': 'Das Formular ist abgelaufen. Gehen Sie zurück und versuchen Sie es erneut.',
    'enroll.error.rate': 'Zu viele Versuche. Warten Sie einige Minuten und versuchen Sie es dann erneut.',
    'required.password.title': 'Ein neues Passwort wählen',
    'required.password.intro':
      'Ihr Administrator bittet Sie, ein neues Passwort zu wählen, bevor Sie zu {app} weitergehen.',
    'required.password.new': 'Neues Passwort',
    'required.password.repeat': 'Neues Passwort wiederholen',
    'required.password.save': 'Speichern und weiter',
    'required.password.mismatch': 'Die beiden Passwörter sind verschieden.',
    'required.password.refused': 'Dieses Passwort lässt sich nicht verwenden: {reason}',
    'required.factor.title': 'Einen zweiten Faktor einrichten',
    'required.factor.intro':
      'Ihr Administrator bittet Sie, eine zweite Möglichkeit einzurichten, sich auszuweisen, bevor Sie zu {app} weitergehen.',
    'required.factor.none':
      'Während dieser Anmeldung lässt sich kein zweiter Faktor einrichten. Wenden Sie sich an Ihren Administrator.',
  },
};
