// One connection to the daemon for the length of a command, with every client error turned
// into swipectl's failure and exit status: the daemon's "no" is 1, anything that keeps us from
// talking to it is 3, and the socket's path and why it was chosen are in the message.
import JSONCodec
import SwipedClient
import Wire

final class Conversation {
    let socket: SocketChoice
    let client: SwipedClient
    /// `--json`: print each reply line as it came.
    let json: Bool
    /// The token this conversation signs in with, right after the hello (Token.swift).
    let token: SignInToken?
    /// `swipe --record`: every line received, replies and events, in the order they came.
    var transcript: [String]?

    /// Connects, and signs in when there is a token.
    convenience init(_ socket: SocketChoice, json: Bool, token: SignInToken? = nil) throws(Failure) {
        let client: SwipedClient
        do {
            client = try SwipedClient(socketPath: socket.path)
        } catch {
            throw Conversation.unreachable(error, socket)
        }
        self.init(socket, json: json, client: client, token: token)
        try signIn()
    }

    private init(_ socket: SocketChoice, json: Bool, client: SwipedClient, token: SignInToken?) {
        self.socket = socket
        self.json = json
        self.client = client
        self.token = token
        // --json prints the daemon's replies, which echo a request's id: send none.
        client.sendsIDs = !json
    }

    /// A new connection to the same socket (`watch`, once the daemon is back), not yet signed
    /// in: `signIn` is the caller's, which tells a refused token from a daemon lost again.
    func reconnected() throws(ClientError) -> Conversation {
        Conversation(socket, json: json, client: try SwipedClient(socketPath: socket.path), token: token)
    }

    /// The `auth` op with the token, before any other request, so that every request is the
    /// token's person's. Its reply is not printed, also with --json: a script reads the reply
    /// of the command it ran. A refused token ends the run (status 1), whatever else the
    /// connection could have done as its Unix user.
    func signIn() throws(Failure) {
        guard let token else { return }
        do {
            try client.signIn(token: token.value)
        } catch {
            guard error.kind == .server else { throw lost(error) }
            throw Failure(.refused, "sign-in refused: \(error.message); the token came from \(token.origin)")
        }
    }

    /// Sends one request. With --json its reply line goes to stdout whatever it says; an
    /// `ok:false` reply then throws (status 1, the daemon's code and message).
    @discardableResult
    func request(_ op: String, _ arguments: [(String, JSON)] = [], echo: Bool = true) throws(Failure)
        -> JSONObject
    {
        let reply: Reply
        do {
            reply = try client.exchange(op, arguments)
        } catch {
            throw lost(error)
        }
        if json && echo { Output.out(reply.line + "\n") }
        if transcript != nil { try keepTranscript(reply.line) }
        if let error = reply.error { throw Conversation.refusal(error, arguments) }
        return reply.object
    }

    /// The daemon's "no" (status 1). A command on a removed movie also says how to bring it
    /// back: the daemon's not-found names the seq of its removal (Movies' NotFound.swift), and
    /// starts with `after:` when it is about `move`'s `after`, not its `movie`.
    static func refusal(_ error: ClientError, _ arguments: [(String, JSON)]) -> Failure {
        var failure = Failure(.refused, error.description)
        let argument = error.message.hasPrefix("after: ") ? "after" : "movie"
        if error.code == ErrorCode.notFound.rawValue, error.message.contains(" was removed at seq "),
            case .string(let movie)? = arguments.first(where: { $0.0 == argument })?.1
        {
            let word = (movie.hasPrefix("-") ? "-- " : "") + shellQuoted(movie)
            failure.message += "\nbring it back with `swipectl restore \(word)`"
            failure.movieRemoved = true
        }
        return failure
    }

    /// `text` as one shell word: as it is when it holds nothing a shell reads, else in single
    /// quotes.
    static func shellQuoted(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy {
            $0.properties.isAlphabetic || $0.properties.numericType != nil
                || "_.-+/:@%,".unicodeScalars.contains($0)
        }
        return plain && !text.isEmpty ? text : "'" + text.replacing("'", with: #"'\''"#) + "'"
    }

    /// Keeps the events that came before this reply, then the reply.
    private func keepTranscript(_ reply: String) throws(Failure) {
        for _ in 0..<client.pendingEvents.count {
            do {
                if let event = try client.nextEventLine(timeout: 0) { transcript?.append(event.line) }
            } catch {
                throw lost(error)
            }
        }
        transcript?.append(reply)
    }

    /// The failure for a client error met after hello.
    func lost(_ error: ClientError) -> Failure {
        switch error.kind {
        case .server: return Failure(.refused, error.description)
        case .connect, .closed, .timeout, .protocol:
            return Failure(.unreachable, "lost the daemon at \(socket.path): \(error.message)")
        }
    }

    /// Why a connection never got to hello, in a line.
    static func notAnswering(_ error: ClientError, _ socket: SocketChoice) -> String {
        error.kind == .connect
            ? error.message : "the daemon at \(socket.path) did not answer: \(error.message)"
    }

    /// Whether the daemon sent `bye` `revoked` instead of hello: this Unix user's name was given
    /// the role none. Trying again changes nothing until an admin gives a role back.
    static func isRevoked(_ error: ClientError) -> Bool { error.kind == .closed && error.code == "revoked" }

    /// The words for a connection refused or ended with `bye` `revoked` (status 1: the daemon
    /// said no).
    static func revoked(_ socket: SocketChoice, ended: Bool) -> Failure {
        Failure(
            .refused,
            "the daemon at \(socket.path) \(ended ? "ended the session" : "refused the connection"): revoked: this person has no rights there any more (an admin gave the name the role none, or took its token back)"
        )
    }

    /// The failure for a connection that never got to hello, with a hint for the usual causes.
    static func unreachable(_ error: ClientError, _ socket: SocketChoice) -> Failure {
        if isRevoked(error) { return revoked(socket, ended: false) }
        var message = notAnswering(error, socket)
        message += "\n  Tried \(socket.path) because \(socket.reason)."
        if error.message.hasSuffix("No such file or directory")
            || error.message.hasSuffix("Connection refused")
        {
            message +=
                "\n  Is swiped running? Start it with `make run` or `systemctl start swiped.socket`, or give --socket PATH."
        } else if error.message.hasSuffix("Permission denied") {
            message +=
                "\n  Only root and members of the group that owns the socket may connect (`usermod -aG swiped $USER`)."
        }
        return Failure(.unreachable, message)
    }
}
