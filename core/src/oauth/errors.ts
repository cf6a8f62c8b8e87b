// The OAuth error is the contract's (decision 84), beside its table of codes; the core's modules
// keep importing it from here.
export { OAuthError, oauthError } from '@gatehouse-auth/plugin-api';
