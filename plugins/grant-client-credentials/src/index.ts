import { definePlugin, z } from '@gatehouse-auth/core';
import { clientCredentialsGrant } from './grant.js';

export { clientCredentialsGrant, CLIENT_CREDENTIALS } from './grant.js';
export { serviceSubjectOf, SERVICE_SUBJECT_TYPES, type ServiceSubject, type ServiceSubjectType } from './subject.js';

/**
 * @gatehouse-auth/grant-client-credentials: machine-to-machine tokens for confidential clients, with
 * `service_subject_type` (enterprise | user) and `service_subject_id` limited to what the app's
 * `service_subjects` config permits.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/grant-client-credentials'
 */
export default definePlugin({
  name: '@gatehouse-auth/grant-client-credentials',
  apiVersion: '^1',
  options: z.strictObject({}).default({}),
  register(api) {
    api.grants.add(clientCredentialsGrant());
  },
});
