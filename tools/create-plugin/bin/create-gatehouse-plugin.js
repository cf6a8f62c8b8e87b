#!/usr/bin/env node
// The `create-gatehouse-plugin` command (`npx @gatehouse-auth/create-plugin`,
// `npm init @gatehouse-auth/plugin`). A file in git, not in dist/, so that `npm ci` in a fresh
// checkout can link it into node_modules/.bin before the first build.
import '../dist/cli.js';
