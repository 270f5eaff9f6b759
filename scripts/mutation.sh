#!/usr/bin/env bash
# One mutation-testing pass (mutmut) over the four rules engines and the hidden-information
# code, against their fast unit and property tests.  Run on purpose, not by the test suite;
# it takes a while.
#
#   ./scripts/mutation.sh [MUTANTS_PER_FILE] [SEED]     (defaults: 6, 13; 0 = every mutant)
#
# What is mutated (MUTATE below):
# - games/{liars_dice,jass,blokus,hanabi}/rules.py: the rules, and every per-seat, public and
#   revealed observation (what each seat and each spectator may know);
# - games/{liars_dice,jass,hanabi}/protocol.py: what a bot is told on the wire, built from its
#   own observation (Blokus has no hidden information: one memento for all);
# - the runner's view functions (games/arena/play/runner.py: which observation goes to a
#   spectator and which to a person's seat); only those functions of that file.
#
# mutmut lives in a throw-away virtualenv that sees the project's .venv packages (it is not in
# requirements.lock), and it mutates a copy of the last commit under $ARENA_MUTATION_DIR
# (default /tmp/arena-mutation), never the work tree (ARENA_MUTATION_REV: another commit, to
# compare the tests before and after a change).  The full set is thousands of mutants,
# so by default it tests a random sample per file (fixed seed: the same sample every run).
# Prints killed/survived counts per file and each survivor's name (its diff: mutmut show NAME).
# Run it under `nice`: each mutant runs the tests that reach the mutated function.
set -euo pipefail
cd "$(dirname "$0")/.."
per_file=${1:-6}
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
git archive "${ARENA_MUTATION_REV:-HEAD}" | tar -x -C "$work/src"
cd "$work/src"
cat >> pyproject.toml <<'TOML'

[tool.mutmut]
source_paths = ["games"]
only_mutate = [
    "games/liars_dice/rules.py", "games/jass/rules.py", "games/blokus/rules.py", "games/hanabi/rules.py",
    "games/liars_dice/protocol.py", "games/jass/protocol.py", "games/hanabi/protocol.py",
    "games/arena/play/runner.py",
]
also_copy = ["webapp", "benchmarks", "manage.py", "templates", "static"]
pytest_add_cli_args = [
    "-p", "no:cacheprovider", "-q",
    # a server in a subprocess, which mutmut's per-test bookkeeping cannot follow; and a test
    # whose runner thread writes to SQLite, which fails ("disk I/O error") in mutmut's fork
    "--deselect", "tests/test_hidden_information.py::test_a_tcp_bot_watching_its_own_automatic_match_never_sees_the_dice_in_play",
    "--deselect", "tests/test_hidden_information.py::test_api_and_pages_of_a_running_match_show_no_hand",
]
pytest_add_cli_args_test_selection = [
    "tests/test_liars_dice_rules.py", "tests/test_jass_rules.py", "tests/test_blokus_rules.py", "tests/test_hanabi_rules.py",
    "tests/test_liars_dice_bots.py", "tests/test_jass_bots.py", "tests/test_blokus_bots.py", "tests/test_hanabi_bots.py",
    "tests/test_observations.py", "tests/test_blokus_memento.py", "tests/test_jass_views.py",
    "tests/test_hanabi_hidden.py", "tests/test_hanabi_protocol.py", "tests/test_hidden_information.py",
    "tests/test_liars_dice_protocol.py", "tests/test_jass_protocol.py",
    "tests/test_jass_logs.py", "tests/test_liars_dice_logs.py",
]
TOML

# file -> the functions to mutate in it (empty: all of it).  mutmut names a mutant
# module.xǁClassǁmethod__mutmut_N or module.x_function__mutmut_N.
MUTATE='{
  "games/liars_dice/rules.py": [], "games/jass/rules.py": [], "games/blokus/rules.py": [],
  "games/hanabi/rules.py": [],
  "games/liars_dice/protocol.py": [], "games/jass/protocol.py": [], "games/hanabi/protocol.py": [],
  "games/arena/play/runner.py": ["_public_view", "latest_for", "_view_body", "_publish_views"]
}'
mutmut="$work/venv/bin/mutmut"
# Generate every mutant (in-process, as `mutmut run` does first), then pick the sample.
"$work/venv/bin/python" - "$per_file" "$seed" "$work/sample.txt" "$MUTATE" > "$work/generate.log" <<'PY'
import json, random, re, sys
from pathlib import Path

from mutmut.__main__ import create_mutants
from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir, setup_source_paths

per_file, seed, out, mutate = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
copy_src_dir()
copy_also_copy_files()
setup_source_paths()
create_mutants(1)
sample = []
for path, functions in mutate.items():
    names = sorted(json.loads(Path(f"mutants/{path}.meta").read_text())["exit_code_by_key"])
    if functions:
        names = [n for n in names if re.search(r"[ǁ_](%s)__mutmut_\d+$" % "|".join(functions), n)]
    chosen = names if per_file == 0 else random.Random(f"{seed}:{path}").sample(names, min(per_file, len(names)))
    print(f"# {path}: {len(chosen)} of {len(names)} mutants", file=sys.stderr)
    sample += sorted(chosen)
Path(out).write_text("\n".join(sample) + "\n")
PY
cat "$work/generate.log" >&2 || true

xargs -a "$work/sample.txt" "$mutmut" run --max-children 1 > "$work/run.log" 2>&1 || {
  tail -40 "$work/run.log"; exit 1; }

"$work/venv/bin/python" - "$work/sample.txt" "$MUTATE" <<'PY'
import json, sys
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

sample = set(Path(sys.argv[1]).read_text().split())
survivors = []
for path in json.loads(sys.argv[2]):
    codes = json.loads(Path(f"mutants/{path}.meta").read_text())["exit_code_by_key"]
    counts = Counter()
    for name in sorted(sample & set(codes)):
        status = status_by_exit_code[codes[name]]
        counts[status] += 1
        if status != "killed":
            survivors.append((name, status))
    print(f"{path}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
print(f"\n{len(survivors)} not killed:")
for name, status in survivors:
    print(f"  {status}: {name}")
PY
echo
echo "Each survivor's diff: cd $work/src && $mutmut show NAME"
