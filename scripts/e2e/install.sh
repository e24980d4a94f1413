#!/usr/bin/env bash
# Installs code-server 4.100.3 (VS Code 1.100.3, the newest that runs on Node 20) and playwright-core
# into .vscode-e2e/ for the end-to-end suite, following /work/shared/E2E.md: code-server's own
# postinstall needs the network (ripgrep from GitHub) and a TTY (npx node-gyp), so we run the steps
# ourselves. Idempotent: a stamp file records a finished install and the script exits early.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TOOLS="$ROOT/.vscode-e2e"
VERSION=4.100.3
STAMP="$TOOLS/.installed-$VERSION"

# System packages (Chromium, ripgrep, libkrb5-dev), checked on every run: installed as root with
# apt-get, or the exact command to run is printed and the run stops here.
node "$ROOT/scripts/setup-test-deps.mjs" --for=e2e

if [[ -f "$STAMP" ]]; then
  exit 0
fi

export npm_config_yes=true npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
mkdir -p "$TOOLS"
cd "$TOOLS"
[[ -f package.json ]] || echo '{ "name": "plumber-vscode-e2e-tools", "private": true }' > package.json

echo "e2e: installing code-server $VERSION (about a minute from a cold cache)"
npm install --no-save --ignore-scripts --loglevel=error "code-server@$VERSION" playwright-core >/dev/null
npm rebuild argon2 --loglevel=error >/dev/null

CS="$TOOLS/node_modules/code-server"
cd "$CS/lib/vscode"
npm install --omit=dev --ignore-scripts --loglevel=error >/dev/null
mkdir -p node_modules/@vscode/ripgrep/bin
ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
npm rebuild --loglevel=error >/dev/null

# What code-server's postinstall.sh would have done.
ln -sfn node_modules node_modules.asar
ln -sf code-linux.sh bin/remote-cli/code-server 2>/dev/null || true
ln -sf browser-linux.sh bin/helpers/browser.sh 2>/dev/null || true
cd extensions
npm install --omit=dev --loglevel=error >/dev/null

touch "$STAMP"
echo "e2e: code-server $VERSION ready in $TOOLS"
