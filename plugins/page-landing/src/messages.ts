import type { PluginCatalogs } from '@gatehouse-auth/core';

/** The landing page's texts, by locale (they were `landing.*` of the core's catalogs before decision 76). */
export const MESSAGES: PluginCatalogs = {
  en: {
    'landing.title': 'Welcome',
    'landing.intro': 'This is the sign-in service of {product}. Apps send you here to sign in.',
    'landing.account': 'Manage your account: sign-in methods, devices and sessions',
    'landing.docs': 'Documentation',
    'landing.discovery': 'OpenID Connect configuration (for developers)',
  },
  de: {
    'landing.title': 'Willkommen',
    'landing.intro': 'Dies ist der Anmeldedienst von {product}. Apps schicken Sie hierher, damit Sie sich anmelden.',
    'landing.account': 'Ihr Konto verwalten: Anmeldemethoden, Geräte und Sitzungen',
    'landing.docs': 'Dokumentation',
    'landing.discovery': 'OpenID-Connect-Konfiguration (für Entwickler)',
  },
};
