/** Where the routes mount, and the endpoint under it (the core's sign-out form posts there too). */
export const MOUNT = '/session';
export const END_SESSION_PATH = `${MOUNT}/end_session`;
