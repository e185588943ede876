# ./charybdis mutate: sourced by ./charybdis, which defines log, build,
# bazel_cmd and sweep_size. docs/mutations.md explains the two modes:
#
#   ./charybdis mutate [--quick] [NAME...]
#       the hand-written bugs of tests/mutations/NAME.patch: which test
#       catches each;
#   ./charybdis mutate --generate N [--seed S] [--quick] [--at REV] [PATH...]
#       N mutants of core/ (or of the PATHs) made by tests/mutations/generate.py,
#       each killed or not; the kill rate per folder, and the survivors' diffs.

readonly MUTATE_USAGE="usage: ./charybdis mutate [--quick] [NAME...]
       ./charybdis mutate --generate N [--seed S] [--quick] [--at REV] [PATH...]

  NAME          a hand-written bug, tests/mutations/NAME.patch (default: all)
  --generate N  N mutants generated from core/ (or from the PATHs, files or
                folders) by tests/mutations/generate.py, the folders taking
                turns; the verdicts are kept per revision and seed in
                tests/mutations/runs/, so the same command resumes where an
                interrupted run stopped, on this machine or, once that file
                is committed, on another
  --seed S      the seed of the generated choice (default 1)
  --at REV      mutate this revision (default HEAD)
  --quick       a tenth of each scenario's seeds (default: the CI sweep's)

Each mutant is applied to a scratch copy of the revision, built, and run
against the seed sweep of ./charybdis test and then the Bazel tests under
tests/. A test that fails is run again without the mutant: if it fails
there too, the verdict is \"flaky\", not a kill. Survivors judged
equivalent are listed in tests/mutations/equivalent.txt and leave the score."

# The exit status of a sweep of the simulator as a reason.
sweep_failure_reason() {
  case $1 in
    1) echo "a check failed" ;;
    3) echo "liveness" ;;
    4) echo "nondeterminism" ;;
    134) echo "an assertion aborted" ;;
    124 | 137) echo "a hang: the sweep ran over ${MUTANT_SWEEP_LIMIT_S} s" ;;
    *) echo "exit $1" ;;
  esac
}

# Wall-clock seconds one sweep of one scenario may take under a mutant
# (the slowest, kv_faults' 500 seeds, takes about a minute).
MUTANT_SWEEP_LIMIT_S=${MUTANT_SWEEP_LIMIT_S:-900}

# Runs seeds FIRST..LAST of a scenario in TREE, those up to CHECKED twice;
# on a failure prints "seed N (reason)" and returns 1. With PROBES 0, a
# run whose seeds all passed but whose sweep missed a required probe
# (checks.sweep_reaches_probe) passes: a tenth of the seeds may be too few
# to reach one, with or without a mutant.
mutant_sweep_range() {
  local tree=$1 scenario=$2 first=$3 last=$4 checked=$5 probes=$6 output="" status=0 seed why
  local range="$first-$last"
  [[ $first -le $last ]] || return 0
  # A mutant may make a run loop forever (a PRNG stuck at one value drew
  # the same event again and again): CI would time out on it, so a sweep
  # that runs over the limit kills it.
  local sim=(timeout --kill-after=10 "$MUTANT_SWEEP_LIMIT_S" ./bazel-bin/sim/charybdis_sim --scenario="$scenario"
    --jobs="$(nproc)")
  if [[ $checked -ge $first ]]; then
    local checked_last=$((checked < last ? checked : last))
    output=$(cd "$tree" && "${sim[@]}" --seeds="$first-$checked_last" --check_determinism 2>/dev/null) ||
      status=$?
    first=$((checked_last + 1))
  fi
  if [[ $status -eq 0 && $first -le $last ]]; then
    output=$(cd "$tree" && "${sim[@]}" --seeds="$first-$last" 2>/dev/null) || status=$?
  fi
  [[ $status -eq 0 ]] && return 0
  seed=$(echo "$output" | sed -n 's/^  .* seed \([0-9]*\): .*/\1/p' | head -n 1)
  local missed_probe
  missed_probe=$(echo "$output" | sed -n 's/.*FAILED: probe \([^ ]*\) (checks.sweep_reaches_probe).*/\1/p' | head -n 1)
  if [[ -z $seed && -n $missed_probe ]]; then
    [[ $probes -eq 0 ]] && return 0
    echo "seeds $range (probe $missed_probe reached by no seed)"
    return 1
  fi
  why=$(sweep_failure_reason "$status")
  if [[ $status -eq 1 ]] && echo "$output" | grep -q "seed ${seed}: the run crashed"; then
    why="an assertion aborted"
  fi
  echo "seed ${seed:-?} ($why)"
  return 1
}

# Orders the scenario paths on stdin by how many mutants each killed so
# far in MUTANT_RESULTS (a generated run's verdicts), most first, ties
# in name order: a kill found by the first scenario costs one scenario's
# run instead of a dozen. The verdicts do not depend on the order.
scenarios_by_kills() {
  awk -v results="${MUTANT_RESULTS:-/dev/null}" '
    BEGIN {
      while ((getline line < results) > 0)
        if (match(line, /killed by sweep [^ ]+/)) kills[substr(line, RSTART + 16, RLENGTH - 16)]++
    }
    { printf "%d\t%s\n", kills[$0], $0 }' | sort -t$'\t' -k1,1nr -k2,2 | cut -f2
}

# The sweep in TREE, in two passes. Pass 1: a tenth of every scenario's
# seeds (most kills come early). Pass 2: the sweep of ./charybdis test as
# it runs there, the required probes included. Prints
# "sweep SCENARIO seed N (reason)" on a kill.
mutant_sweep() {
  local tree=$1 pass=$2 scenario seeds checked failure
  local scenarios
  mapfile -t scenarios < <(cd "$tree" && ls scenarios/*.textproto | scenarios_by_kills)
  for scenario in "${scenarios[@]}"; do
    read -r seeds checked < <(cd "$tree" && sweep_size "$scenario")
    if [[ $pass -eq 1 ]]; then
      failure=$(mutant_sweep_range "$tree" "$scenario" 1 "$(((seeds + 9) / 10))" "$(((checked + 9) / 10))" 0) ||
        { echo "sweep $scenario $failure"; return 1; }
    else
      # The two runs of ./charybdis test's sweep(): 1..CHECKED twice, then the rest.
      failure=$(mutant_sweep_range "$tree" "$scenario" 1 "$checked" "$checked" 1 &&
        mutant_sweep_range "$tree" "$scenario" "$((checked + 1))" "$seeds" 0 1) ||
        { echo "sweep $scenario $failure"; return 1; }
    fi
  done
}

# The Bazel tests under tests/ in TREE. On a failure prints the first
# failing target, "build" when the tests do not build, or "interrupted"
# (Bazel stopped: a verdict then would be made up).
mutant_tests() {
  local tree=$1 status=0
  (cd "$tree" && bazel_cmd test --noshow_progress --ui_event_filters=-info //tests/... \
    >"$tree.test.log" 2>&1) || status=$?
  case $status in
    0) return 0 ;;
    3) grep -oE '^//tests:[a-z_0-9]+ +.*(FAILED|TIMEOUT)' "$tree.test.log" | head -n 1 | awk '{print $1}' ;;
    1) echo "build" ;;
    *) echo "interrupted" ;;
  esac
  return 1
}

# A hang is measured in wall-clock time, which a busy machine stretches:
# it kills only if the scenario's whole sweep finishes within the limit
# without the mutant. Prints the verdict.
confirm_hang() {
  local tree=$1 patch=$2 killer=$3 scenario seeds checked
  scenario=$(echo "$killer" | awk '{print $2}')
  (cd "$tree" && git apply -R "$patch") && rm -f "$tree.applied"
  if (cd "$tree" && build //sim:charybdis_sim 2>/dev/null) &&
      read -r seeds checked < <(cd "$tree" && sweep_size "$scenario") &&
      ! mutant_sweep_range "$tree" "$scenario" 1 "$seeds" 0 0 >/dev/null; then
    echo "flaky: $scenario fails or runs over ${MUTANT_SWEEP_LIMIT_S} s without the mutant too"
    return
  fi
  if [[ $killer == *"(a hang:"* ]]; then
    confirm_hang "$tree" "$patch" "$killer"
    return
  fi
  echo "killed by $killer"
}

# Checks the mutant applied in TREE. Prints one verdict:
#   "not built" (the simulator or the tests), "killed by sweep ...",
#   "killed by //tests:x", "flaky: ... without the mutant too",
#   "survived", or "interrupted" (Bazel was stopped: no verdict).
# PATCH is the mutant, to take out again when a test must be confirmed.
check_mutant() {
  local tree=$1 patch=$2 quick=$3 killer target
  if ! (cd "$tree" && build //sim:charybdis_sim 2>/dev/null); then
    echo "not built"
    return
  fi
  if killer=$(mutant_sweep "$tree" 1); then
    if target=$(mutant_tests "$tree"); then
      if [[ $quick -eq 1 ]] || killer=$(mutant_sweep "$tree" 2); then
        echo "survived"
        return
      fi
    elif [[ $target == build ]]; then
      echo "not built"  # the tests do not compile with it
      return
    elif [[ $target == interrupted ]]; then
      echo "interrupted"
      return
    else
      # A kill by a test counts only if the test passes without the mutant.
      (cd "$tree" && git apply -R "$patch") && rm -f "$tree.applied"
      if (cd "$tree" && bazel_cmd test --noshow_progress --ui_event_filters=-info \
          --nocache_test_results "${target:-//tests/...}" >/dev/null 2>&1); then
        echo "killed by ${target:-a build of the tests}"
      else
        echo "flaky: ${target:-the tests} fails without the mutant too"
      fi
      return
    fi
  fi
  echo "killed by $killer"
}

# The scratch trees of ./charybdis mutate: WORK/pristine holds REV as
# git archive gives it, WORK/tree the same with one patch applied. Each
# mode has its own, so a generated run and hand-written mutations can run
# at once.
MUTATE_WORK="${TMPDIR:-/tmp}/charybdis-mutate"

# Makes WORK/pristine hold REV, unless it already does.
prepare_pristine_tree() {
  local rev=$1
  [[ $(cat "$MUTATE_WORK/pristine.rev" 2>/dev/null) == "$rev" ]] && return
  rm -rf "$MUTATE_WORK/pristine" && mkdir -p "$MUTATE_WORK/pristine"
  git archive "$rev" | tar -x -C "$MUTATE_WORK/pristine"
  echo "$rev" >"$MUTATE_WORK/pristine.rev"
}

# Makes WORK/tree the pristine tree with PATCH applied. The tree is kept
# from one mutant to the next and only the last patch is taken out, so
# Bazel's incremental build recompiles only what the patches touch.
prepare_mutant_tree() {
  local patch=$1 tree=$MUTATE_WORK/tree
  if [[ -f $tree.applied ]]; then
    (cd "$tree" && git apply -R "$(cat "$tree.applied")") 2>/dev/null || rm -rf "$tree"
    rm -f "$tree.applied"
  fi
  if [[ ! -d $tree || $(cat "$tree.rev" 2>/dev/null) != $(cat "$MUTATE_WORK/pristine.rev") ]]; then
    rm -rf "$tree"
    cp -a "$MUTATE_WORK/pristine" "$tree"
    cp "$MUTATE_WORK/pristine.rev" "$tree.rev"
  fi
  (cd "$tree" && git apply "$patch") || return 1
  echo "$patch" >"$tree.applied"
}

# Hand-written mutations, one at a time: a table of who caught what.
run_hand_written_mutations() {
  local quick=$1
  shift
  local names=("$@") name patch rows caught total verdict
  if [[ ${#names[@]} -eq 0 ]]; then
    for patch in tests/mutations/*.patch; do names+=("$(basename "$patch" .patch)"); done
  fi
  prepare_pristine_tree "$(git rev-parse HEAD)"
  rows=$(mktemp)
  for name in "${names[@]}"; do
    patch="$PWD/tests/mutations/$name.patch"
    [[ -f $patch ]] || { log "no mutation $patch"; exit 2; }
    log "mutation $name"
    if ! prepare_mutant_tree "$patch" 2>/dev/null; then
      printf '%s\tdoes not apply to HEAD\n' "$name" | tee -a "$rows"
      continue
    fi
    verdict=$(check_mutant "$MUTATE_WORK/tree" "$patch" "$quick")
    case $verdict in
      "not built") verdict="caught by the build" ;;
      killed\ by\ *) verdict="caught by ${verdict#killed by }" ;;
      survived) verdict="MISSED" ;;
      interrupted) log "mutation $name: Bazel was interrupted; stopping"; exit 1 ;;
    esac
    printf '%s\t%s\n' "$name" "$verdict" | tee -a "$rows"
  done
  total=$(wc -l <"$rows")
  caught=$(grep -c $'\tcaught by' "$rows" || true)
  echo "caught $caught of $total mutations$([[ $quick -eq 1 ]] && echo ' (--quick: a tenth of the seeds)')"
  rm -f "$rows"
}

# The verdicts of a generated run as a table per folder: mutants, not
# built, flaky, equivalent, killed, survived, and the kill rate, which is
# killed / (killed + survived), equivalent survivors left out.
mutant_score_table() {
  local results=$1 equivalent=$2
  awk -F'\t' -v equivalent_file="$equivalent" '
    BEGIN {
      while ((getline line < equivalent_file) > 0) {
        if (line ~ /^m[0-9a-f]+ /) { split(line, f, " "); equivalent[f[1]] = 1 }
      }
    }
    function count(folder, what) { n[folder, what]++; n["all", what]++; folders[folder] = 1 }
    {
      folder = $2; verdict = $4
      count(folder, "mutants")
      if (verdict == "not built") count(folder, "not_built")
      else if (verdict ~ /^flaky/) count(folder, "flaky")
      else if (verdict ~ /^killed/) count(folder, "killed")
      else if ($1 in equivalent) count(folder, "equivalent")
      else count(folder, "survived")
    }
    function row(folder,   k, s) {
      k = n[folder, "killed"] + 0; s = n[folder, "survived"] + 0
      printf "%-18s %7d %9d %5d %10d %6d %8d %6s\n", folder, n[folder, "mutants"], n[folder, "not_built"],
        n[folder, "flaky"], n[folder, "equivalent"], k, s, (k + s > 0) ? sprintf("%.0f%%", 100 * k / (k + s)) : "-"
    }
    END {
      printf "%-18s %7s %9s %5s %10s %6s %8s %6s\n", "folder", "mutants", "not built", "flaky", "equivalent",
        "killed", "survived", "kill %"
      m = 0
      for (folder in folders) sorted[++m] = folder
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (sorted[j] < sorted[i]) { t = sorted[i]; sorted[i] = sorted[j]; sorted[j] = t }
      for (i = 1; i <= m; i++) row(sorted[i])
      row("all")
    }' "$results"
}

# N generated mutants of REV, checked one by one; resumes from the
# verdicts kept in tests/mutations/runs/KEY.tsv for the same revision, seed
# and paths. That file is in the tree because a whole run takes longer
# than a machine may live: committed, it lets the next one go on. The
# patches and the summary are made again from the seed, in the cache.
run_generated_mutants() {
  local count=$1 seed=$2 quick=$3 at=$4
  shift 4
  local paths=("$@") rev dir id folder path line operator original mutated verdict
  [[ ${#paths[@]} -gt 0 ]] || paths=(core)
  rev=$(git rev-parse --verify --quiet "$at^{commit}") || { log "--at: no revision $at"; exit 2; }
  local key
  key="${rev:0:12}-seed$seed-n$count$([[ $quick -eq 1 ]] && echo -quick)-$(echo "${paths[*]}" | sha1sum | cut -c1-8)"
  dir="${XDG_CACHE_HOME:-$HOME/.cache}/charybdis/mutants/$key"
  local results=$PWD/tests/mutations/runs/$key.tsv
  mkdir -p "$dir" "$(dirname "$results")"
  prepare_pristine_tree "$rev"
  if [[ ! -s $dir/mutants.tsv ]]; then
    /usr/bin/python3 tests/mutations/generate.py --root "$MUTATE_WORK/pristine" --count "$count" \
      --seed "$seed" --out "$dir" "${paths[@]}" || exit 2
  fi
  touch "$results"
  export MUTANT_RESULTS=$results
  local total done_count=0 started checked_now=0 spent=0 eta
  total=$(wc -l <"$dir/mutants.tsv")
  log "$total mutants of ${paths[*]} at ${rev:0:12}, seed $seed; verdicts in $results"
  while IFS=$'\t' read -r id folder path line operator original mutated; do
    done_count=$((done_count + 1))
    if grep -q "^$id"$'\t' "$results"; then continue; fi
    started=$SECONDS
    if prepare_mutant_tree "$dir/$id.patch" 2>/dev/null; then
      verdict=$(check_mutant "$MUTATE_WORK/tree" "$dir/$id.patch" "$quick")
    else
      verdict="not built"
    fi
    if [[ $verdict == interrupted ]]; then
      log "[$done_count/$total] $id: Bazel was interrupted; no verdict recorded (the same command resumes)"
      exit 1
    fi
    printf '%s\t%s\t%s\t%s\n' "$id" "$folder" "$operator" "$verdict" >>"$results"
    # The time left, at this run's pace so far (a run takes hours).
    checked_now=$((checked_now + 1))
    spent=$((spent + SECONDS - started))
    eta=$(((total - done_count) * spent / checked_now / 60))
    log "[$done_count/$total] $id $path:$line $operator: $verdict ($((SECONDS - started)) s; about $((eta / 60)) h $((eta % 60)) min left)"
  done <"$dir/mutants.tsv"
  local table
  table=$(mutant_score_table "$results" tests/mutations/equivalent.txt)
  echo "$table" | tee "$dir/summary.txt"
  local survivors
  survivors=$(awk -F'\t' '$4 == "survived" { print $1 }' "$results" |
    grep -vxFf <(grep -oE '^m[0-9a-f]+' tests/mutations/equivalent.txt) || true)
  if [[ -n $survivors ]]; then
    echo
    echo "survivors (not in tests/mutations/equivalent.txt):"
    for id in $survivors; do
      echo "--- $id"
      sed -n '3,$p' "$dir/$id.patch"
    done
  fi | tee -a "$dir/summary.txt"
  echo "kill rate $(echo "$table" | tail -n 1 | awk '{print $NF}')" \
    "of $total mutants$([[ $quick -eq 1 ]] && echo ' (--quick: a tenth of the seeds)'); $dir/summary.txt"
}

run_mutate() {
  local quick=0 generate="" seed=1 at=HEAD names=()
  while (($#)); do
    case $1 in
      --quick) quick=1; shift ;;
      --generate) generate=${2:-}; shift 2 || { log "--generate needs a count"; exit 2; } ;;
      --seed) seed=${2:-}; shift 2 || { log "--seed needs a number"; exit 2; } ;;
      --at) at=${2:-}; shift 2 || { log "--at needs a revision"; exit 2; } ;;
      -h | --help) echo "$MUTATE_USAGE"; return 0 ;;
      -*) log "unknown flag $1"; echo "$MUTATE_USAGE" >&2; exit 2 ;;
      *) names+=("$1"); shift ;;
    esac
  done
  if [[ -z $generate ]]; then
    [[ $at == HEAD ]] || { log "--at goes with --generate"; exit 2; }
    MUTATE_WORK+=/hand-written
    run_hand_written_mutations "$quick" "${names[@]}"
    return
  fi
  [[ $generate =~ ^[1-9][0-9]*$ ]] || { log "--generate takes a positive count (got '$generate')"; exit 2; }
  [[ $seed =~ ^[0-9]+$ ]] || { log "--seed takes a number (got '$seed')"; exit 2; }
  MUTATE_WORK+=/generated
  run_generated_mutants "$generate" "$seed" "$quick" "$at" "${names[@]}"
}
