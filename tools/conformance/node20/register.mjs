// `node --import ./node20/register.mjs …/conformance/dist/index.js`: installs hooks.mjs.
import { register } from "node:module"

register("./hooks.mjs", import.meta.url)
