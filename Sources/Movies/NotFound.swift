// The one `not-found` error for a movie id. `decide` throws it for every command and the Session
// answers it for every gesture and `close`, so that a removed movie gets the same code and the
// same message from every op (protocol.md, "Errors").
extension MovieState {
    /// Why `id` names no movie in this state: `movie "x" was removed at seq N` for a removed id,
    /// `no movie with id "x"` for one that never existed. Long ids are cut (`MessageText`).
    public func notFound(_ id: String) -> CommandError {
        let quoted = "\"\(MessageText.truncated(id))\""
        if let seq = removed[id]?.movie.version {
            return .notFound("movie \(quoted) was removed at seq \(seq)")
        }
        return .notFound("no movie with id \(quoted)")
    }
}

/// Client text echoed in an error message.
public enum MessageText {
    /// `text` when it has at most 64 bytes of UTF-8, else its first 60 characters and "…".
    public static func truncated(_ text: String) -> String {
        text.utf8.count <= 64 ? text : String(text.prefix(60)) + "…"
    }
}
