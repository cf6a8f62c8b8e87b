import type { PluginCatalogs } from '@gatehouse-auth/core';

/** The logout pages' texts (the confirmation, signed out, a refused request), by locale. */
export const MESSAGES: PluginCatalogs = {
  en: {
    'logout.title': 'Sign out?',
    'logout.asked_by': '{app} asks to sign you out.',
    'logout.about_to': 'You are about to sign out.',
    'logout.confirm': 'Sign out',
    'logout.stay': 'To stay signed in, close this page.',
    'logout.done.title': 'Signed out',
    'logout.done.heading': 'You are signed out',
    'logout.done.app': 'You are signed out of {app} and every app you signed in to here.',
    'logout.done.all': 'You are signed out of every app you signed in to here.',
    'logout.error.title': 'This sign-out request cannot be completed',
    'logout.error.text': '{description} ({error})',
    'logout.error.note': 'Go back to the app you came from.',
  },
  de: {
    'logout.title': 'Abmelden?',
    'logout.asked_by': '{app} möchte Sie abmelden.',
    'logout.about_to': 'Sie sind dabei, sich abzumelden.',
    'logout.confirm': 'Abmelden',
    'logout.stay': 'Um angemeldet zu bleiben, schließen Sie diese Seite.',
    'logout.done.title': 'Abgemeldet',
    'logout.done.heading': 'Sie sind abgemeldet',
    'logout.done.app': 'Sie sind von {app} und allen Apps abgemeldet, bei denen Sie sich hier angemeldet haben.',
    'logout.done.all': 'Sie sind von allen Apps abgemeldet, bei denen Sie sich hier angemeldet haben.',
    'logout.error.title': 'Diese Abmeldeanfrage kann nicht abgeschlossen werden',
    'logout.error.text':
      'Die App hat eine Anfrage gesendet, die nicht angenommen werden kann. Technische Angabe für die App: {description} ({error})',
    'logout.error.note': 'Gehen Sie zurück zu der App, von der Sie kamen.',
  },
};
