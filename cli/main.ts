/** Entry point of the `svc` command (bin/svc.js imports the compiled file). */
import { buildProgram, runProgram } from "./program.js"

await runProgram(buildProgram(), process.argv)
