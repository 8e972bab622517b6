#!/usr/bin/env bash
# Create benchmarks/.peer-venv (gitignored) with the peer LDP libraries pinned in
# benchmarks/peer-requirements.lock, isolated from ldpopt's own .venv.
#
#   bash benchmarks/setup_peers.sh            # install from the lock (reproducible)
#   bash benchmarks/setup_peers.sh --relock   # resolve the top-level pins again, rewrite the lock
#
# Peers: pure-ldp==1.2.0 and multi-freq-ldpy==0.2.5. pure-ldp does not declare everything it
# imports: `import pure_ldp.frequency_oracles` pulls in statsmodels (rappor_server.py) and
# scikit-learn; xxhash is pinned <4. The lock is what we resolved and ran with.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.peer-venv"
lock="$here/peer-requirements.lock"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade "pip==25.3"

if [[ "${1:-}" == "--relock" || ! -f "$lock" ]]; then
    "$venv/bin/python" -m pip install --quiet \
        "pure-ldp==1.2.0" "multi-freq-ldpy==0.2.5" "xxhash<4" "numpy" "scipy" "scikit-learn" "statsmodels" "pandas"
    {
        echo "# Exact versions of everything in benchmarks/.peer-venv (written by setup_peers.sh --relock)."
        "$venv/bin/python" -m pip freeze --exclude pip
    } > "$lock"
else
    "$venv/bin/python" -m pip install --quiet -r "$lock"
fi
"$venv/bin/python" -c "import pure_ldp, multi_freq_ldpy; print('peers ok')"
