// Who the front end acts for (issue 45; protocol.md, "Who may do what"): the sign-in with a
// token, the role the header shows, a role changed while the connection lives, a refusal of
// what the role may not do said in words, and the daemon's `bye` `revoked`.
import Movies

extension TuiStateMachine {
    /// The sign-in's reply: the connection acts for `user` with `role` from now on.
    mutating func signedIn(user: String?, role: String, quiet: Bool, _ now: Double) {
        state.model.signingIn = false
        setWho(user: user, role: role)
        if !quiet { say("Signed in as \(who)", now) }
    }

    /// The daemon refused the token (revoked or expired since swipectl checked it at start): the
    /// connection stays who its hello said, and says so. The next connection tries again.
    mutating func signInRefused(_ message: String, _ now: Double) {
        state.model.signingIn = false
        say("Sign-in refused: \(message); this connection is \(who)", error: true, now)
    }

    /// A `role` event: this connection's rights changed. When the token it signed in with goes,
    /// a first event says that person has no rights here (role none), a second who the
    /// connection is now (its Unix user): the second's words say both.
    mutating func roleChanged(user: String?, role: String, _ now: Double) {
        let before = (user: state.model.user, role: state.model.role)
        setWho(user: user, role: role)
        if role == "none" {
            return say("\(Self.name(user)) has no rights here any more", error: true, now)
        }
        if before.role == "none", before.user != user {
            return say(
                "\(Self.name(before.user))'s token was revoked or expired: this connection is \(who) now",
                error: true, now)
        }
        let rights = state.model.writer ? "may change the list" : "read-only: may read and swipe"
        say("Role changed: \(who) \(rights)", error: !state.model.writer, now)
    }

    /// `bye` `revoked`: this connection's person has no rights here any more. `lose` has
    /// dropped the connection and set the next attempt; the status line says why in words (a
    /// new connection is refused the same way until an admin gives a role back).
    mutating func revoked() {
        state.model.status =
            "No access: an admin took \(Self.name(state.model.user))'s rights away (bye: revoked); trying again…"
    }

    /// A `forbidden` reply to `request`, when it is something the role may not do that the
    /// front end asked for on a key or a gesture: said in words, and a row the refused gesture
    /// left open or dragged is closed (the daemon leaves it as it was, mid-drag). False for the
    /// others, which are refusals like any other.
    mutating func forbidden(_ request: TuiRequest, _ message: String, _ now: Double) -> Bool {
        let what: String
        switch request {
        case .release(let movie, _):
            what = "That swipe would change the list, which"
            closeRefused(movie, now)
        case .tap(let movie, let action), .perform(let movie, let action):
            what = "“\(Self.label(action))”"
            closeRefused(movie, now)
        case .add: what = "Adding a movie"
        case .move(let movie, _, _):
            what = "Moving a movie"
            state.moves[movie] = nil
        case .restore: what = "Undoing the delete"
        case .signIn, .list, .subscribe, .viewport, .drag, .open, .close, .closeAll, .peek, .crossings,
            .record, .recording, .share, .peers, .configure:
            return false
        }
        // From a daemon before roles (no role in its hello), its own words say it best.
        guard state.model.role != nil else {
            say(message, error: true, now)
            return true
        }
        say("\(what) needs the role writer: \(who) is read-only here", error: true, now)
        return true
    }

    // MARK: - Helpers

    /// The connection's person and role, as the header and the messages say them.
    var who: String {
        guard let role = state.model.role else { return state.model.writer ? "a writer" : "read-only" }
        return state.model.user.map { "\($0) (\(role))" } ?? "anonymous (\(role))"
    }

    private mutating func setWho(user: String?, role: String) {
        state.model.user = user
        state.model.role = role
        state.model.writer = role == "writer" || role == "admin"
    }

    private static func name(_ user: String?) -> String { user ?? "this connection" }

    /// An action's button label in the movie layout (`delete` → Delete), else the action.
    private static func label(_ action: String) -> String {
        let layout = MovieLayout.standard
        return (layout.leading + layout.trailing).first { $0.action == action }?.label ?? action
    }

    /// Closes `movie`'s row when it is not closed at rest.
    private mutating func closeRefused(_ movie: String, _ now: Double) {
        guard state.renders[movie] != nil else { return }
        send(.close(movie: movie), now)
    }
}
