import type { PluginCatalogs } from '@gatehouse-auth/core';

/** The user code page's messages (`en` complete; `de` too). */
export const MESSAGES: PluginCatalogs = {
  en: {
    'device.title': 'Connect a device',
    'device.enter': 'Enter the code your device shows.',
    'device.code_label': 'Code',
    'device.continue': 'Continue',
    'device.wrong_code': 'This code is wrong or has expired. Check the code on your device.',
    'device.too_many': 'Too many attempts. Try again in {seconds} seconds.',
    'device.form_expired': 'The form has expired. Enter the code again.',
    'device.login_failed': 'The sign-in did not complete. Enter the code again.',
    'device.gone':
      'This request can no longer be answered: it has expired or was answered already. Start again on your device.',
    'device.confirm_title': 'Connect {app} to your account?',
    'device.confirm_text': 'Allow this only if you started signing in on that device yourself, just now.',
    'device.confirm_scopes': '{app} asks for:',
    'device.allow': 'Allow',
    'device.deny': 'Deny',
    'device.approved_title': 'Device connected',
    'device.approved_text': 'You can return to your device now.',
    'device.denied_title': 'Not connected',
    'device.denied_text': 'The device was not given access to your account.',
  },
  de: {
    'device.title': 'Gerät verbinden',
    'device.enter': 'Geben Sie den Code ein, den Ihr Gerät anzeigt.',
    'device.code_label': 'Code',
    'device.continue': 'Weiter',
    'device.wrong_code': 'Dieser Code ist falsch oder abgelaufen. Prüfen Sie den Code auf Ihrem Gerät.',
    'device.too_many': 'Zu viele Versuche. Versuchen Sie es in {seconds} Sekunden erneut.',
    'device.form_expired': 'Das Formular ist abgelaufen. Geben Sie den Code erneut ein.',
    'device.login_failed': 'Die Anmeldung wurde nicht abgeschlossen. Geben Sie den Code erneut ein.',
    'device.gone':
      'Diese Anfrage kann nicht mehr beantwortet werden: Sie ist abgelaufen oder wurde schon beantwortet. Beginnen Sie auf Ihrem Gerät neu.',
    'device.confirm_title': '{app} mit Ihrem Konto verbinden?',
    'device.confirm_text':
      'Erlauben Sie das nur, wenn Sie die Anmeldung auf diesem Gerät gerade selbst begonnen haben.',
    'device.confirm_scopes': '{app} möchte:',
    'device.allow': 'Erlauben',
    'device.deny': 'Ablehnen',
    'device.approved_title': 'Gerät verbunden',
    'device.approved_text': 'Sie können jetzt zu Ihrem Gerät zurückkehren.',
    'device.denied_title': 'Nicht verbunden',
    'device.denied_text': 'Das Gerät hat keinen Zugriff auf Ihr Konto erhalten.',
  },
};
