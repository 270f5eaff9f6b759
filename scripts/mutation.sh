#!/usr/bin/env bash
# One mutation-testing pass (mutmut) over the rules engines, which also build every per-seat,
# public and revealed observation: games/{liars_dice,jass,blokus}/rules.py, against their
# fast unit and property tests.  Run on purpose, not by the test suite; it takes a while.
#
#   ./scripts/mutation.sh [MUTANTS_PER_FILE] [SEED]     (defaults: 100, 13; 0 = every mutant)
#
# mutmut lives in a throw-away virtualenv that sees the project's .venv packages (it is not in
# requirements.lock), and it mutates a copy of the last commit under $ARENA_MUTATION_DIR
# (default /tmp/arena-mutation), never the work tree.  The full set is thousands of mutants,
# so by default it tests a random sample per file (fixed seed: the same sample every run).
# Prints killed/survived counts per file and each survivor's diff (mutmut show NAME).
set -euo pipefail
cd "$(dirname "$0")/.."
per_file=${1:-100}
seed=${2:-13}
work=${ARENA_MUTATION_DIR:-/tmp/arena-mutation}
mkdir -p "$work"

if [ ! -x "$work/venv/bin/mutmut" ]; then
  python3 -m venv "$work/venv"
  site=$("$work/venv/bin/python" -c "import site; print(site.getsitepackages()[0])")
  .venv/bin/python -c "import site; print(site.getsitepackages()[0])" > "$site/arena-venv.pth"
  "$work/venv/bin/pip" install -q --disable-pip-version-check mutmut==3.8.1
fi

rm -rf "$work/src"
mkdir -p "$work/src"
git archive HEAD | tar -x -C "$work/src"
cd "$work/src"
cat >> pyproject.toml <<'EOF'

[tool.mutmut]
source_paths = ["games"]
only_mutate = ["games/liars_dice/rules.py", "games/jass/rules.py", "games/blokus/rules.py"]
also_copy = ["webapp", "benchmarks", "manage.py"]
pytest_add_cli_args = ["-p", "no:cacheprovider", "-q"]
pytest_add_cli_args_test_selection = [
    "tests/test_liars_dice_rules.py", "tests/test_jass_rules.py", "tests/test_blokus_rules.py",
    "tests/test_liars_dice_bots.py", "tests/test_jass_bots.py", "tests/test_blokus_bots.py",
    "tests/test_observations.py",
]
EOF

mutmut="$work/venv/bin/mutmut"
# Generate every mutant (in-process, as `mutmut run` does first), then pick the sample.
"$work/venv/bin/python" - "$per_file" "$seed" "$work/sample.txt" > "$work/generate.log" <<'EOF'
import json, random, sys
from pathlib import Path

from mutmut.__main__ import create_mutants
from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir, setup_source_paths

per_file, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
copy_src_dir()
copy_also_copy_files()
setup_source_paths()
create_mutants(1)
sample = []
for meta in sorted(Path("mutants/games").glob("*/rules.py.meta")):
    names = sorted(json.loads(meta.read_text())["exit_code_by_key"])
    chosen = names if per_file == 0 else random.Random(f"{seed}:{meta}").sample(names, min(per_file, len(names)))
    print(f"# {meta.parent.name}: {len(chosen)} of {len(names)} mutants", file=sys.stderr)
    sample += sorted(chosen)
Path(out).write_text("\n".join(sample) + "\n")
EOF

xargs -a "$work/sample.txt" "$mutmut" run --max-children 1 > "$work/run.log" 2>&1 || {
  tail -40 "$work/run.log"; exit 1; }

"$work/venv/bin/python" - "$work/sample.txt" <<'EOF'
import json, sys
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

sample = set(Path(sys.argv[1]).read_text().split())
survivors = []
for meta in sorted(Path("mutants/games").glob("*/rules.py.meta")):
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    counts = Counter()
    for name in sorted(sample & set(codes)):
        status = status_by_exit_code[codes[name]]
        counts[status] += 1
        if status != "killed":
            survivors.append((name, status))
    print(f"{meta.parent.name}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
print(f"\n{len(survivors)} not killed:")
for name, status in survivors:
    print(f"  {status}: {name}")
EOF
echo
echo "Each survivor's diff: cd $work/src && $mutmut show NAME"
