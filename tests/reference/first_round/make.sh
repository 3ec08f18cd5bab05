#!/usr/bin/env bash
# The first round's tables, written by mechsym as it was at commit 683ec53 (before the core became one
# design), for tests/test_first_round.py: every later version must give the same tables (inverse and
# kinematics to 1e-9, forward within its rtol). Run from the repository: bash tests/reference/first_round/make.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=$(mktemp -d)
(cd "$here/../../.." && git archive 683ec53) | tar -x -C "$tree"
cd "$tree"
export MECHSYM_CACHE="$tree/.cache"
for m in fourbar slider-crank pasibot; do
  python -m mechsym inverse "$m" --omega 1 --omega 4 --samples 73 --out "$tree/inverse_$m.csv"
  python -m mechsym kinematics "$m" --samples 73 --out "$tree/kinematics_$m.csv"
done
for m in fourbar slider-crank; do
  python -m mechsym forward "$m" --torque 0.05 --omega0 2 --t-end 1 --dt 0.02 --rtol 1e-11 --atol 1e-12 \
    --out "$tree/forward_$m.csv"
done
for f in "$tree"/*.csv; do gzip -n -9 -c "$f" > "$here/$(basename "$f").gz"; done
rm -rf "$tree"
