#!/usr/bin/env bash
# Checks `svc mcp` against a client nobody here wrote: the MCP Inspector in CLI mode lists the
# tools and calls `whoami` and `search_docs` over stdio. The Inspector needs Node 22 or later
# (svc itself runs on Node 20), so run this where Node 22 is installed:
#
#   npm run build                      # svc mcp runs the compiled CLI (bin/svc.js)
#   SVC_API_KEY=sk_... scripts/mcp-inspector.sh [--data-dir ./.svc]
#   SVC_API_KEY=sk_... scripts/mcp-inspector.sh --url http://127.0.0.1:8787/mcp
#
# SVC_API_KEY must be a personal key (svc keys create --org S --name N --all-scopes --personal --member E).
# Any arguments are passed on to `svc mcp`. Exits non-zero on the first failing call.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 22 ]; then
  echo "mcp-inspector.sh: the MCP Inspector needs Node 22 or later (this is Node $(node --version))." >&2
  exit 2
fi
if [ -z "${SVC_API_KEY:-}" ]; then
  echo "mcp-inspector.sh: set SVC_API_KEY to a personal key." >&2
  exit 2
fi

# The Inspector's own flags could take svc's arguments: a one-line wrapper holds the server command.
wrapper="$(mktemp "${TMPDIR:-/tmp}/svc-mcp-XXXXXX.sh")"
trap 'rm -f "$wrapper"' EXIT
printf '#!/usr/bin/env bash\nexec node %q mcp' "$here/bin/svc.js" >"$wrapper"
for argument in "$@"; do printf ' %q' "$argument" >>"$wrapper"; done
chmod +x "$wrapper"

inspect() {
  npx --yes @modelcontextprotocol/inspector --cli -e "SVC_API_KEY=$SVC_API_KEY" "$wrapper" "$@"
}

echo "== tools/list" >&2
inspect --method tools/list
echo "== whoami" >&2
inspect --method tools/call --tool-name whoami
echo "== search_docs" >&2
inspect --method tools/call --tool-name search_docs --tool-arg "query=personal keys"
echo "== resources/list" >&2
inspect --method resources/list
