import type { AccountStore, Services } from '@gatehouse-auth/plugin-api';
import type { DevicePushes } from '../devices/pushes.js';
import type { DeviceStore } from '../devices/store.js';
import type { Locales } from '../i18n/locales.js';
import type { DependencyChecks } from '../observability/dependencies.js';
import type { ClientRegistry } from '../oauth/clients.js';
import type { LogoutService } from '../oauth/logout.js';
import type { SessionStore } from '../oauth/sessions.js';
import type { TokenService } from '../oauth/tokens.js';
import type { Extensions, LoadedPluginInfo } from '../plugins/loader.js';
import type { UserProfiles } from './profile.js';
import type { RequiredActions } from './required-actions.js';
import type { UserService } from './users.js';

export interface AccountStoreDeps {
  users: UserService;
  logout: LogoutService;
  tokens: TokenService;
  events: Services['events'];
  devices: DeviceStore;
  pushes: DevicePushes;
  sessions: SessionStore;
  locales: Locales;
  extensions: Extensions;
  clients: ClientRegistry;
  loadedPlugins: LoadedPluginInfo[];
  dependencies: DependencyChecks;
  lifecycle: { draining: boolean };
  profiles: UserProfiles;
  requiredActions: RequiredActions;
}

/**
 * The core's account operations as plugins get them (`services.accountStore`, decision 0063):
 * the stores the `userAccounts` service (a plugin's) composes and audits, nothing more. `deps`
 * is read at each call: the loaded plugins are known only after every plugin registered.
 */
export function accountStore(deps: AccountStoreDeps): AccountStore {
  // Sessions and tokens end: those of an account disabled, or of a way to sign in removed.
  const signOut = async (userId: string, reason: string) => {
    await deps.logout.endUserSessions(userId, reason);
    await deps.tokens.revokeSubject(userId, reason);
  };
  return {
    createUser: (input) => deps.users.create(input),
    setStatus: async (userId, status) => void (await deps.users.setStatus(userId, status)),
    signOut,
    endSession: (sid, reason) => deps.logout.endSession(sid, reason),
    erase: (userId) => deps.users.erase(userId),
    setAddress: (userId, field, value) => deps.users.setAddress(userId, field, value),
    search: (query, limit, offset) => deps.users.search(query, limit, offset),
    findById: (id) => deps.users.findById(id),
    method: (id, req) => {
      const method = deps.extensions.methods.get(id);
      if (!method) return null;
      const t = deps.locales.for(req);
      const renew = method.page?.renew;
      return {
        label: t.or(`method.${id}.label`, method.page?.label ?? id),
        renew: renew
          ? {
              text: t.or(`method.${id}.renew.text`, renew.text),
              button: t.or(`method.${id}.renew.button`, renew.button),
            }
          : null,
      };
    },
    devices: async (userId) =>
      (await deps.devices.ofUser(userId)).map(({ deviceId, name, biometric, createdAt, lastUsedAt }) => ({
        deviceId,
        name,
        biometric,
        createdAt,
        lastUsedAt,
      })),
    removeDevice: async (userId, deviceId) => {
      if (!(await deps.devices.remove(userId, deviceId))) return false;
      await deps.pushes.endPushesOf(deviceId);
      await signOut(userId, 'method_removed');
      await deps.events.record({ type: 'device.removed', userId, data: { device_id: deviceId } });
      return true;
    },
    sessions: (userId) => deps.sessions.ofUser(userId),
    clientsOf: (sid) => deps.sessions.clientsOf(sid),
    profile: (userId) => deps.profiles.get(userId),
    updateProfile: (userId, patch) => deps.profiles.update(userId, patch),
    requiredActions: (userId) => deps.requiredActions.of(userId),
    setRequiredActions: (userId, actions) => deps.requiredActions.set(userId, actions),
    overview: async () => ({
      apps: deps.clients.all(),
      plugins: deps.loadedPlugins,
      methods: deps.extensions.methods.ids(),
      dependencies: await deps.dependencies.states(),
      draining: deps.lifecycle.draining,
    }),
  };
}
