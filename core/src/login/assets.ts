import { FAVICON, FORM_POST_JS, LOGIN_CSS, PASSWORD_REVEAL_JS, sendAsset } from '@gatehouse-auth/plugin-api';
import express, { type Router } from 'express';

// The hosted pages' style sheet, icon and scripts are the contract's (core/plugin-api/assets/login/,
// decision 85): the core serves them.

/** `/login/assets/login.css`, the scripts under `/login/assets/`, and the icon at `/favicon.ico`. */
export function assetRoutes(): Router {
  const router = express.Router();
  router.get('/favicon.ico', (_req, res) => sendAsset(res, FAVICON));
  router.get('/login/assets/login.css', (_req, res) => sendAsset(res, LOGIN_CSS));
  router.get('/login/assets/form-post.js', (_req, res) => sendAsset(res, FORM_POST_JS));
  router.get('/login/assets/password-reveal.js', (_req, res) => sendAsset(res, PASSWORD_REVEAL_JS));
  return router;
}
