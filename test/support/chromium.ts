/** Where the browser tests find a system chromium (they download none: playwright-core drives what is there). */
import { existsSync } from "node:fs"
import { delimiter, join } from "node:path"

/** The system chromium: Debian's `/usr/bin/chromium`, else `chromium` or `chromium-browser` on the PATH; undefined when there is none. */
export const findChromium = (): string | undefined => {
  const onPath = (process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== "")
  const candidates = ["/usr/bin/chromium", ...onPath.flatMap((dir) => [join(dir, "chromium"), join(dir, "chromium-browser")])]
  return candidates.find((file) => existsSync(file))
}
