import { definePlugin, z } from '@gatehouse-auth/core';
import { clientCredentialsGrant } from './grant.js';
import { serviceSubjectsConfig } from './subject.js';

export { clientCredentialsGrant, CLIENT_CREDENTIALS } from './grant.js';
export {
  serviceSubjectOf,
  serviceSubjectsConfig,
  SERVICE_SUBJECT_TYPES,
  type ServiceSubject,
  type ServiceSubjects,
  type ServiceSubjectType,
} from './subject.js';

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
  appConfig: { service_subjects: serviceSubjectsConfig },
  register(api) {
    api.grants.add(clientCredentialsGrant());
  },
});
