#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance), pinned, with the Node it
# needs (22 or later: npm serves Node itself as the package `node`; the machine's is older), for
# tests/server/test_mcp_conformance.py. CI runs this and then requires the test
# (ENVHUB_MCP_CONFORMANCE_REQUIRED=1 in .ci/run). Idempotent; about 240 MB under the folder below.
set -euo pipefail
CONFORMANCE_VERSION=0.2.0-alpha.12  # the first release line that runs the 2026-07-28 revision's scenarios
NODE_VERSION=22.23.3
DEST="${ENVHUB_MCP_CONFORMANCE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/envhub/mcp-conformance}"
STAMP="conformance@$CONFORMANCE_VERSION node@$NODE_VERSION"

if [[ -x "$DEST/node_modules/.bin/node" && "$(cat "$DEST/.installed" 2>/dev/null)" == "$STAMP" ]]; then
  echo "MCP conformance suite: $STAMP already in $DEST"
  exit 0
fi
command -v npm >/dev/null || { echo "install-mcp-conformance: npm is needed (Debian: apt-get install npm)" >&2; exit 1; }
mkdir -p "$DEST"
rm -f "$DEST/.installed"
npm install --prefix "$DEST" --no-audit --no-fund --loglevel=error --save-exact \
  "node@$NODE_VERSION" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
"$DEST/node_modules/.bin/node" --version | grep -q "^v${NODE_VERSION%%.*}\." \
  || { echo "install-mcp-conformance: npm's node is not Node ${NODE_VERSION%%.*}" >&2; exit 1; }
echo "$STAMP" > "$DEST/.installed"
echo "MCP conformance suite: $STAMP installed in $DEST"
