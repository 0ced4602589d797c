// `swipectl --help`: the whole of swipectl on one screen (swipectl(1) has the long form).

enum Usage {
    static let text = """
        Usage: swipectl [--socket PATH] [--json] [--token-file FILE] COMMAND [ARGS...]

        Talks to swiped, the swipe-actions daemon, over its Unix socket (see protocol.md).

        Commands:
          list [--from ID] [--limit N] [--match TEXT]
                                    the movies: id, title, 👁 watched, 👥 watched with friends;
                                    those after movie ID, at most N (1 to 1000), whose title
                                    contains TEXT (any case)
          add TITLE [--image NAME]  add a movie at the end of the list
          toggle-watched MOVIE      flip the movie's watched flag
          toggle-friends MOVIE      flip the movie's watched-with-friends flag
          remove MOVIE              remove the movie
          restore MOVIE             bring a removed movie back as it was (MOVIE: its id)
          move MOVIE --after MOVIE  put the movie right after the other one in the list
          move MOVIE --first        put the movie first in the list
          undo SEQ                  undo the change at SEQ (see history), whoever made it,
                                    unless the movie changed since; says what it did
                                    and whose change it was
          watch [--from SEQ] [--once]
                                    print every change as it happens (SEQ TIME BY
                                    CHANGE ID TITLE; BY is who made it, - when not
                                    known), until Ctrl-C
                                    (with --from, first the changes after SEQ); when
                                    the daemon restarts, connect again and go on where
                                    it stopped (with --once, exit 3 instead)
          history [--from SEQ] [--limit N] [--by NAME]
                                    stored changes after SEQ (default 0), at most N (default
                                    100), with who made each (BY); only NAME's with --by
          swipe MOVIE --dx POINTS [--vx PT/S] [--steps N] [--verbose]
                                    drag the movie's row (steps of at most 20 points), release,
                                    and print the row and what fired
          swipe MOVIE --open leading|trailing [--tap ACTION] [--verbose]
                                    open the row on that edge, then tap one of its buttons
          swipe MOVIE --perform ACTION
                                    fire one of the row's actions without swiping
          tui [--ascii] [--rtl] [--record-dir DIR] [--confirm-delete] [--no-peek]
              [--full-swipe fill|close|dismiss]
                                    the terminal front end: drag rows with the mouse or use
                                    the keys (? shows them), live; --ascii: no symbols; r
                                    records into DIR (default: the current directory);
                                    --confirm-delete: ask before deleting (c toggles it);
                                    --no-peek: no hint at start (the first row peeks);
                                    --full-swipe: what a full swipe does (F cycles it)
          swipe … --record FILE     also record the gesture's session into FILE, and the rows
                                    the connection received into FILE.rows
          replay FILE [--expect ROWS]
                                    replay a recording on the engine, no daemon: one JSON
                                    line per row state; with --expect, compare the rows
                                    with ROWS (exit 1 at the first difference)
          call JSON                 send one raw request line and print the raw reply
          help                      the daemon's ops and their arguments
          status                    how the daemon is doing: uptime, store, clients,
                                    requests, latencies (p50/p99/p99.9), memory; exit 0
                                    healthy, 1 degraded (the store unavailable), 3
                                    unreachable, 4 a daemon without the status op
          whoami                    who this connection is: user, role, and how (the Unix
                                    user, or the token)
          token create NAME --role reader|writer|admin [--expires DURATION]
                                    make a token that signs in as NAME; DURATION: 30d,
                                    12h, 90m, 3600s, 2w or seconds (default: never). The
                                    token is the last line of stdout, shown this once; for
                                    whom, its role, id and expiry go to stderr
          token list                every token: NAME ROLE TOKEN-ID CREATED EXPIRES
                                    LAST-USED (never the token itself)
          token revoke NAME [--id TOKENID]
                                    revoke NAME's tokens (or only that one); connections
                                    signed in with them lose their rights within a second
          role NAME [none|reader|writer|admin]
                                    give NAME a role on every door (none: no rights at all),
                                    or without ROLE say the role given
          role NAME --clear         take back the role given: the door decides again
          denials                   the latest refusals (at most 100), oldest first
                                    (token, role and denials are for admins)

        MOVIE is a movie id, or the start of one title (any case) that no other title starts
        with; an exact title wins over longer ones.

        Options:
          --socket PATH   the daemon's socket (default: $SWIPED_SOCKET, else
                          $XDG_RUNTIME_DIR/swiped.sock if it exists, else
                          /run/swiped/swiped.sock if it exists, else ./swiped.sock)
          --json          print the daemon's JSON lines as they came, one per line
          --token-file FILE
                          sign in with the token in FILE (- for standard input) right
                          after connecting, and act as its person
          --token TOKEN   the same with the token itself, which others on this machine
                          may see in the process list: prefer $SWIPED_TOKEN or
                          --token-file (default: $SWIPED_TOKEN, if set)
          -h, --help      print this text
          --version       print swipectl's version

        Exit status: 0 done; 1 the daemon said no (a refused sign-in too), MOVIE matched no
        movie or several, or the gesture did not do what was asked (message on stderr); 2
        usage error; 3 cannot reach the daemon (the message names the socket and why).

        Examples:
          swipectl list
          swipectl list --match godfather --limit 20
          swipectl toggle-watched matrix
          swipectl toggle-friends 'the god'
          swipectl move se7en --after 'the green mile'
          swipectl swipe seven --dx -300
          swipectl swipe matrix --open trailing --tap delete
          swipectl --json history --from 10 | jq .events
          swipectl history --by alice
          swipectl call '{"op":"ping"}'
          swipectl status || echo "swiped is not healthy"
          swipectl token create alice --role writer --expires 30d > alice.token
          SWIPED_TOKEN=$(cat alice.token) swipectl whoami
        """
}
