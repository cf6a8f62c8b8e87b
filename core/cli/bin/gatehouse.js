#!/usr/bin/env node
// The `gatehouse` command. A file in git, not in dist/, so that `npm ci` in a fresh checkout can
// link it into node_modules/.bin before the first build.
import '../dist/main.js';
