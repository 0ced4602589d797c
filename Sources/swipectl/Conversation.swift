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
    /// `swipe --record`: every line received, replies and events, in the order they came.
    var transcript: [String]?

    convenience init(_ socket: SocketChoice, json: Bool) throws(Failure) {
        do {
            try self.init(socket, json: json, client: SwipedClient(socketPath: socket.path))
        } catch {
            throw Conversation.unreachable(error, socket)
        }
    }

    private init(_ socket: SocketChoice, json: Bool, client: SwipedClient) {
        self.socket = socket
        self.json = json
        self.client = client
        // --json prints the daemon's replies, which echo a request's id: send none.
        client.sendsIDs = !json
    }

    /// A new connection to the same socket (`watch`, once the daemon is back).
    func reconnected() throws(ClientError) -> Conversation {
        Conversation(socket, json: json, client: try SwipedClient(socketPath: socket.path))
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
    /// back: the daemon's not-found names the seq of its removal (Movies' NotFound.swift).
    static func refusal(_ error: ClientError, _ arguments: [(String, JSON)]) -> Failure {
        var failure = Failure(.refused, error.description)
        if error.code == ErrorCode.notFound.rawValue, error.message.contains(" was removed at seq "),
            case .string(let movie)? = arguments.first(where: { $0.0 == "movie" })?.1
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

    /// The failure for a connection that never got to hello, with a hint for the usual causes.
    static func unreachable(_ error: ClientError, _ socket: SocketChoice) -> Failure {
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
