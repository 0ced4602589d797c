# fish completion for swipectl(1): commands, options, and the ids of the movies the daemon lists
# (given up after 1 s, as in swipectl.bash, which says why).

function __swipectl_movie_ids
    set -l socket
    set -l tokens (commandline -opc)
    set -l i (contains -i -- --socket $tokens)
    and set socket --socket $tokens[(math $i + 1)]
    timeout 1 swipectl $socket list --limit 1000 2>/dev/null | awk 'NR > 1 { print $1 }'
end

# `history`'s table of the last 1,000 changes (swipectl.bash says how).
function __swipectl_recent_history
    set -l socket
    set -l tokens (commandline -opc)
    set -l i (contains -i -- --socket $tokens)
    and set socket --socket $tokens[(math $i + 1)]
    set -l latest (timeout 1 swipectl $socket --json history --limit 1 2>/dev/null | string match -r '"seq":[0-9]+' | head -1 | string replace '"seq":' '')
    test -n "$latest"; or return
    set -l from 0
    test $latest -gt 1000; and set from (math $latest - 1000)
    timeout 1 swipectl $socket history --from $from --limit 1000 2>/dev/null
end

# The movies removed in the last 1,000 changes and not restored since (swipectl.bash says how).
function __swipectl_removed_ids
    __swipectl_recent_history |
        awk 'NR == 1 { c = index($0, "CHANGE"); i = index($0, " ID ") + 1; next }
             { ch = substr($0, c, i - c); sub(/ +$/, "", ch); id = substr($0, i); sub(/ .*/, "", id); last[id] = ch }
             END { for (id in last) if (last[id] ~ /^removed/) print id }'
end

# The people who made the last 1,000 changes, for `history --by` (swipectl.bash says how).
function __swipectl_authors
    __swipectl_recent_history | awk 'NR > 1 && $3 != "-" && !seen[$3]++ { print $3 }'
end

# Whether the word before the cursor is role's NAME (ROLE comes next), options aside.
function __swipectl_after_role_name
    set -l words (string match -v -- '-*' (commandline -opc))
    set -l i (contains -i -- role $words)
    and test (count $words) -eq (math $i + 1)
end

set -l commands list add toggle-watched toggle-friends remove restore move undo watch history swipe tui replay call help status token role denials whoami
complete -c swipectl -f
complete -c swipectl -l socket -r -F -d "the daemon's socket"
complete -c swipectl -l json -d "print the daemon's JSON lines"
complete -c swipectl -l token-file -r -F -d 'sign in with the token in FILE'
complete -c swipectl -l token -x -d 'sign in with this token (prefer --token-file)'
complete -c swipectl -s h -l help -d 'print the usage'
complete -c swipectl -l version -d "print swipectl's version"
complete -c swipectl -n "not __fish_seen_subcommand_from $commands" -a "$commands"
complete -c swipectl -n "__fish_seen_subcommand_from toggle-watched toggle-friends remove move swipe" -a "(__swipectl_movie_ids)"
complete -c swipectl -n "__fish_seen_subcommand_from move" -l after -x -a "(__swipectl_movie_ids)" -d 'right after this movie'
complete -c swipectl -n "__fish_seen_subcommand_from move" -l first -d 'first in the list'
complete -c swipectl -n "__fish_seen_subcommand_from list" -l from -x -a "(__swipectl_movie_ids)" -d 'after this movie'
complete -c swipectl -n "__fish_seen_subcommand_from list" -l limit -x -d 'at most this many'
complete -c swipectl -n "__fish_seen_subcommand_from list" -l match -x -d 'titles containing this'
complete -c swipectl -n "__fish_seen_subcommand_from add" -l image -x -d 'image name'
complete -c swipectl -n "__fish_seen_subcommand_from watch" -l from -x -d 'after this seq'
complete -c swipectl -n "__fish_seen_subcommand_from watch" -l once -d 'exit 3 when the daemon goes'
complete -c swipectl -n "__fish_seen_subcommand_from history" -l from -x -d 'after this seq'
complete -c swipectl -n "__fish_seen_subcommand_from history" -l limit -x -d 'at most this many'
complete -c swipectl -n "__fish_seen_subcommand_from history" -l by -x -a "(__swipectl_authors)" -d 'only the changes this person made'
complete -c swipectl -n "__fish_seen_subcommand_from swipe" -l dx -x -d 'drag by points'
complete -c swipectl -n "__fish_seen_subcommand_from swipe" -l vx -x -d 'release velocity'
complete -c swipectl -n "__fish_seen_subcommand_from swipe" -l steps -x -d 'equal steps'
complete -c swipectl -n "__fish_seen_subcommand_from swipe" -l open -x -a 'leading trailing'
complete -c swipectl -n "__fish_seen_subcommand_from swipe" -l tap -x -a 'watched watched-with-friends delete'
complete -c swipectl -n "__fish_seen_subcommand_from swipe" -l perform -x -a 'watched watched-with-friends delete'
complete -c swipectl -n "__fish_seen_subcommand_from swipe" -l verbose -d 'print every step'
complete -c swipectl -n "__fish_seen_subcommand_from swipe" -l record -r -F -d 'record into FILE'
complete -c swipectl -n "__fish_seen_subcommand_from replay" -F
complete -c swipectl -n "__fish_seen_subcommand_from replay" -l expect -r -F -d 'compare with rows'
complete -c swipectl -n "__fish_seen_subcommand_from tui" -l ascii -d 'no symbols'
complete -c swipectl -n "__fish_seen_subcommand_from tui" -l rtl -d 'right to left'
complete -c swipectl -n "__fish_seen_subcommand_from tui" -l record-dir -x -a '(__fish_complete_directories)'
complete -c swipectl -n "__fish_seen_subcommand_from tui" -l confirm-delete -d 'ask before deleting'
complete -c swipectl -n "__fish_seen_subcommand_from tui" -l no-peek -d 'no hint at start'
complete -c swipectl -n "__fish_seen_subcommand_from tui" -l full-swipe -x -a 'fill close dismiss' -d 'what a full swipe does'
complete -c swipectl -n "__fish_seen_subcommand_from restore" -a "(__swipectl_removed_ids)" -d "removed movie"
complete -c swipectl -n "__fish_seen_subcommand_from token; and not __fish_seen_subcommand_from create list revoke" -a 'create list revoke'
complete -c swipectl -n "__fish_seen_subcommand_from token; and __fish_seen_subcommand_from create" -l role -x -a 'reader writer admin' -d 'what the token may do'
complete -c swipectl -n "__fish_seen_subcommand_from token; and __fish_seen_subcommand_from create" -l expires -x -d 'when it stops working: 30d, 12h, 90m, 2w'
complete -c swipectl -n "__fish_seen_subcommand_from token; and __fish_seen_subcommand_from revoke" -l id -x -d 'only the token with this id'
complete -c swipectl -n "__fish_seen_subcommand_from role; and __swipectl_after_role_name" -a 'none reader writer admin'
complete -c swipectl -n "__fish_seen_subcommand_from role" -l clear -d 'take back the role given'
