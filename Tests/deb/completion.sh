#!/usr/bin/env bash
# swipectl's bash completion, run as bash runs it on Tab: COMP_WORDS and COMP_CWORD set, the
# function that `complete -p swipectl` names called, COMPREPLY read back. Against a real daemon
# (movie ids), a socket that never answers (the 1 s limit), and `swipectl --help` (every command
# and option it lists is offered).
#
#   Tests/deb/completion.sh BINDIR COMPLETION_FILE    (BINDIR holds swiped and swipectl)
set -uo pipefail
bindir=$(cd "$1" && pwd)
script=$2
export PATH="$bindir:$PATH"
work=$(mktemp -d)
daemon= silent=
cleanup() {
    [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
    [ -n "$silent" ] && kill "$silent" 2>/dev/null && wait "$silent" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
failures=0
check() {  # description expected actual
    if [ "$2" = "$3" ]; then echo "  ok: $1"; else echo "  FAIL: $1: expected [$2], got [$3]"; failures=$((failures + 1)); fi
}

# shellcheck source=/dev/null
source "$script"
spec=$(complete -p swipectl)
check "complete -p swipectl" "complete -F _swipectl swipectl" "$spec"
function=$(awk '{ for (i = 1; i < NF; i++) if ($i == "-F") print $(i + 1) }' <<< "$spec")

# The candidates for the command line $1, the cursor at its end (a trailing space: a new word).
complete_line() {
    local line=$1
    read -ra COMP_WORDS <<< "$line"
    [[ $line == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE=$line COMP_POINT=${#line}
    COMPREPLY=()
    "$function" swipectl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

# Commands and options, as `swipectl --help` lists them.
help=$(swipectl --help)
commands=$(sed -n '/^Commands:/,/^$/p' <<< "$help" | awk '/^  [a-z]/ { print $1 }' | sort -u | tr '\n' ' ' | sed 's/ $//')
check "commands (swipectl --help)" "$commands" "$(complete_line 'swipectl ')"
check "a command's start" "toggle-friends toggle-watched" "$(complete_line 'swipectl tog')"
check "global options" "--help --json --socket --token --token-file --version" "$(complete_line 'swipectl --')"
# `token`'s verbs are commands of two words (`token create …`), each with its own lines.
verbs=$(grep -oE '^  token [a-z]+' <<< "$help" | awk '{ print $2 }' | sort -u | tr '\n' ' ' | sed 's/ $//')
check "token's verbs (swipectl --help)" "$verbs" "$(complete_line 'swipectl token ')"
for command in $(sed 's/\btoken\b//' <<< "$commands") $(for verb in $verbs; do echo "token_$verb"; done); do
    command=${command/_/ }
    # Every --option that --help shows on the command's lines (`swipe …` is one of swipe's).
    expected=$(grep -E "^  $command( |$)" <<< "$help" | grep -oE -- '--[a-z-]+' | sort -u)
    offered=$(complete_line "swipectl $command --" | tr ' ' '\n')
    missing=$(comm -23 <(echo "$expected") <(echo "$offered") | tr '\n' ' ')
    check "$command's options offered" "" "${missing% }"
done
check "an option's values" "leading trailing" "$(complete_line 'swipectl swipe seven --open ')"
check "tui's full-swipe styles" "close dismiss fill" "$(complete_line 'swipectl tui --full-swipe ')"
check "token create's roles" "admin reader writer" "$(complete_line 'swipectl token create alice --role ')"
check "role's roles, after the name" "admin none reader writer" "$(complete_line 'swipectl role alice ')"
check "nothing for role's name" "" "$(complete_line 'swipectl role ')"
check "a token file" "$(cd / && compgen -f -- /et)" "$(complete_line 'swipectl --token-file /et')"
check "a command after --token's value" "whoami" "$(complete_line 'swipectl --token swp_x who')"

# Movie ids, from a daemon on the socket the command line names.
"$bindir/swiped" --socket "$work/s.sock" --state "$work/state" 2> "$work/swiped.log" &
daemon=$!
for _ in $(seq 100); do [ -S "$work/s.sock" ] && break; sleep 0.1; done
ids="dark_knight forrest_gump godfather inception matrix pulp_fiction saving_private_ryan seven silence_of_lambs the_green_mile"
check "movie ids" "$ids" "$(complete_line "swipectl --socket $work/s.sock toggle-watched ")"
check "movie ids, with --socket=" "seven" "$(complete_line "swipectl --socket=$work/s.sock swipe se")"
check "no second movie" "" "$(complete_line "swipectl --socket $work/s.sock remove seven ")"
check "no movie for add" "" "$(complete_line "swipectl --socket $work/s.sock add ")"
# move (issue 48): a movie, then another after --after (ids hold no spaces), none after --first.
check "movie ids for move" "$ids" "$(complete_line "swipectl --socket $work/s.sock move ")"
check "movie ids after --after" "the_green_mile" "$(complete_line "swipectl --socket $work/s.sock move seven --after th")"
check "move's options" "--after --first --json --token --token-file" "$(complete_line "swipectl --socket $work/s.sock move seven --")"
check "no second movie for move" "" "$(complete_line "swipectl --socket $work/s.sock move seven --first ")"
# restore: the movies removed and not restored since (a title with spaces and an undo's
# "(undoes N)" in the CHANGE column must not shift the ids).
check "nothing removed: nothing to restore" "" "$(complete_line "swipectl --socket $work/s.sock restore ")"
swipectl --socket "$work/s.sock" remove seven > /dev/null
swipectl --socket "$work/s.sock" remove "The Dark" > /dev/null
swipectl --socket "$work/s.sock" remove matrix > /dev/null
swipectl --socket "$work/s.sock" restore matrix > /dev/null
swipectl --socket "$work/s.sock" remove inception > /dev/null
swipectl --socket "$work/s.sock" undo 15 > /dev/null
check "removed movies for restore" "dark_knight seven" "$(complete_line "swipectl --socket $work/s.sock restore ")"
# history --by: the people who made the last 1,000 changes (root here, and alice through a
# token), not the seed's "-".
check "nobody but root yet" "root" "$(complete_line "swipectl --socket $work/s.sock history --by ")"
alice=$(swipectl --socket "$work/s.sock" token create alice --role writer 2> /dev/null | tail -1)
swipectl --socket "$work/s.sock" --token "$alice" toggle-watched "The God" > /dev/null
check "the authors for --by" "alice root" "$(complete_line "swipectl --socket $work/s.sock history --by ")"
check "an author's start" "alice" "$(complete_line "swipectl --socket $work/s.sock history --by a")"

# A socket that accepts and never answers (a daemon that hangs): Tab gives up after 1 s.
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(16)
time.sleep(60)' "$work/silent.sock" &
silent=$!
for _ in $(seq 50); do [ -S "$work/silent.sock" ] && break; sleep 0.1; done
start=$(date +%s%N)
check "a silent daemon: no ids" "" "$(complete_line "swipectl --socket $work/silent.sock remove ")"
elapsed=$((($(date +%s%N) - start) / 1000000))
if ((elapsed >= 900 && elapsed < 1900)); then echo "  ok: gave up after $elapsed ms"; else
    echo "  FAIL: a silent daemon took $elapsed ms (the limit is 1 s)"; failures=$((failures + 1)); fi
check "no daemon at all: no ids" "" "$(complete_line "swipectl --socket $work/none.sock remove ")"

[ "$failures" = 0 ]
