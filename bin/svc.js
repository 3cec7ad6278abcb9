#!/usr/bin/env node
// The `svc` command: runs the CLI bundle (dist/cli-bundle/, made by `npm run build` after tsc;
// `npm ci` builds through the `prepare` script). See docs/decisions.md, "The CLI ships as a bundle".
import "../dist/cli-bundle/main.js"
