#!/usr/bin/env node
// The `gatehouse-demo` command (`npm run demo`). A file in git, not in dist/, so that `npm ci` in
// a fresh checkout can link it before the first build.
import '../dist/main.js';
