# bash completion for swipectl(1): its commands, each command's options, and the ids of the
# movies the daemon lists. Installed as share/bash-completion/completions/swipectl (loaded on
# demand by the bash-completion package); it needs nothing from that package, so
# `source swipectl.bash` works in a plain bash too.
#
# The commands and options are those of `swipectl --help` (Sources/swipectl/Arguments.swift);
# Tests/deb/completion.sh fails when the two disagree.
#
# Movie ids come from `swipectl list` on the socket the command line names (--socket), else
# swipectl's own default. A socket-activated daemon may need a moment to start, but a shell
# must never hang on Tab: the lookup gives up after 1 s (`timeout`), and then only the other
# completions are offered. Only the first 1,000 ids are offered (`--limit 1000`): a list of
# 100,000 movies would not come within that second.

_swipectl_movie_ids() {
    local -a socket=()
    [[ -n $1 ]] && socket=(--socket "$1")
    # `list` prints a header, then one movie a line, its id first (ids hold no white space).
    timeout 1 swipectl "${socket[@]}" list --limit 1000 2>/dev/null | awk 'NR > 1 { print $1 }'
}

# `history`'s table of the last 1,000 changes: two requests (the latest seq, then the page),
# each given up after 1 s.
_swipectl_recent_history() {
    local -a socket=()
    [[ -n $1 ]] && socket=(--socket "$1")
    local latest
    latest=$(timeout 1 swipectl "${socket[@]}" --json history --limit 1 2>/dev/null | grep -o '"seq":[0-9]*' | head -1)
    latest=${latest#\"seq\":}
    [[ -n $latest ]] || return
    timeout 1 swipectl "${socket[@]}" history --from $((latest > 1000 ? latest - 1000 : 0)) --limit 1000 2>/dev/null
}

# The movies removed in the last 1,000 changes and not restored since, for `restore`: from
# `history`'s columns (CHANGE may hold spaces, so they are cut at the header's positions), each
# movie's last change kept.
_swipectl_removed_ids() {
    _swipectl_recent_history "$1" |
        awk 'NR == 1 { c = index($0, "CHANGE"); i = index($0, " ID ") + 1; next }
             { ch = substr($0, c, i - c); sub(/ +$/, "", ch); id = substr($0, i); sub(/ .*/, "", id); last[id] = ch }
             END { for (id in last) if (last[id] ~ /^removed/) print id }'
}

# The people who made the last 1,000 changes, for `history --by`: BY, the third column (SEQ, TIME
# and a name hold no space), without the "-" of the changes nobody is named for.
_swipectl_authors() {
    _swipectl_recent_history "$1" | awk 'NR > 1 && $3 != "-" && !seen[$3]++ { print $3 }'
}

_swipectl() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    local commands="list add toggle-watched toggle-friends remove restore move undo watch history swipe tui replay call help status token role denials whoami"
    local global="--socket --json --token --token-file --help --version"
    # The options that take a value (the next word is not an operand).
    local valued="--socket --token --token-file --image --from --limit --match --dx --vx --steps --open --tap --perform --record --expect --record-dir --full-swipe --role --expires --id --by --after"

    # The words before the cursor: the command (the first operand; `token` and its verb are
    # one command of two words), its operands, and the --socket given.
    local command= socket= i word
    local -a operands=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        case $word in
            --socket) socket=${COMP_WORDS[i + 1]}; ((i++)) ;;
            --socket=*) socket=${word#--socket=} ;;
            -*=*) ;;
            -*) [[ " $valued " == *" $word "* ]] && ((i++)) ;;
            *)
                if [[ -z $command ]]; then
                    command=$word
                elif [[ $command == token ]]; then
                    command="token $word"
                else
                    operands+=("$word")
                fi ;;
        esac
    done

    # The value of the option before the cursor.
    case $prev in
        --socket | --token-file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --role) COMPREPLY=($(compgen -W "reader writer admin" -- "$cur")); return ;;
        --by) COMPREPLY=($(compgen -W "$(_swipectl_authors "$socket")" -- "$cur")); return ;;
        --after) COMPREPLY=($(compgen -W "$(_swipectl_movie_ids "$socket")" -- "$cur")); return ;;
        --token | --expires | --id) COMPREPLY=(); return ;;
        --record | --expect) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --record-dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")); return ;;
        --open) COMPREPLY=($(compgen -W "leading trailing" -- "$cur")); return ;;
        --full-swipe) COMPREPLY=($(compgen -W "fill close dismiss" -- "$cur")); return ;;
        --tap | --perform) COMPREPLY=($(compgen -W "watched watched-with-friends delete" -- "$cur")); return ;;
        --image | --from | --limit | --match | --dx | --vx | --steps) COMPREPLY=(); return ;;
    esac

    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$global" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        fi
        return
    fi

    local options=
    case $command in
        list) options="--from --limit --match" ;;
        add) options="--image" ;;
        move) options="--after --first" ;;
        watch) options="--from --once" ;;
        history) options="--from --limit --by" ;;
        swipe) options="--dx --vx --steps --open --tap --perform --verbose --record" ;;
        replay) options="--expect" ;;
        tui) options="--ascii --rtl --record-dir --confirm-delete --no-peek --full-swipe" ;;
        "token create") options="--role --expires" ;;
        "token revoke") options="--id" ;;
        role) options="--clear" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options --json --token --token-file" -- "$cur"))
        return
    fi

    # The command's operand: a movie, a file, token's verb, role's ROLE, or nothing to offer.
    case $command in
        token) COMPREPLY=($(compgen -W "create list revoke" -- "$cur")); return ;;
        role)
            ((${#operands[@]} == 1)) && COMPREPLY=($(compgen -W "none reader writer admin" -- "$cur"))
            return ;;
    esac
    ((${#operands[@]} > 0)) && return  # its one operand is there already
    case $command in
        toggle-watched | toggle-friends | remove | move | swipe)
            COMPREPLY=($(compgen -W "$(_swipectl_movie_ids "$socket")" -- "$cur")) ;;
        restore) COMPREPLY=($(compgen -W "$(_swipectl_removed_ids "$socket")" -- "$cur")) ;;
        replay) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
    esac
}

complete -F _swipectl swipectl
