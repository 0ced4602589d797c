// The token a run signs in with (issue 45): `--token TOKEN`, else `--token-file FILE` (`-`:
// standard input), else `$SWIPED_TOKEN`. A token is a password: on the command line anyone on
// the machine can read it in the process list (`ps`, /proc/PID/cmdline) and it stays in the
// shell's history, so swipectl(1) and docs/swipectl.md steer people to the environment (readable
// by the same user only) or a file; `--token` is overwritten in swipectl's own command line as
// soon as it is parsed, which shortens that window but cannot close it.
#if canImport(Glibc)
    import Glibc
#endif

/// A token to sign in with, and where it came from (said by `whoami`, never the token itself).
struct SignInToken: Equatable {
    var value: String
    /// `--token`, `--token-file FILE`, `$SWIPED_TOKEN`.
    var origin: String

    /// The largest file `--token-file` reads: a token is 36 bytes, and `auth` takes 256.
    static let maxFileBytes = 4096

    /// The token of this run, nil for none. An empty `$SWIPED_TOKEN` is no token (as an empty
    /// `$SWIPED_SOCKET` is no socket); an empty file is a mistake worth saying.
    static func resolve(_ source: TokenSource?, environment: [String: String]) throws(Failure) -> SignInToken?
    {
        switch source {
        case .given(let token)?:
            hideInCommandLine(token)
            return SignInToken(value: token, origin: "--token")
        case .file(let path)?:
            let name = path == "-" ? "standard input" : path
            return SignInToken(value: try read(path, name), origin: "--token-file \(name)")
        case nil:
            guard let token = environment["SWIPED_TOKEN"], !token.isEmpty else { return nil }
            return SignInToken(value: token, origin: "$SWIPED_TOKEN")
        }
    }

    /// The token in `path`: its one line, without the white space around it (the newline a
    /// `swipectl token create … > FILE` leaves).
    private static func read(_ path: String, _ name: String) throws(Failure) -> String {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw Failure(.usage, "cannot read --token-file \(name): \(String(cString: strerror(errno)))")
        }
        defer { if fd != 0 { close(fd) } }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while bytes.count <= maxFileBytes {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else {
                throw Failure(.usage, "cannot read --token-file \(name): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        guard bytes.count <= maxFileBytes else {
            throw Failure(
                .usage, "--token-file \(name) is too long to hold a token (over \(maxFileBytes) bytes)")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let token = text.trimmingCharacters { $0.isWhitespace }
        guard !token.isEmpty else { throw Failure(.usage, "--token-file \(name) is empty") }
        guard !token.contains(where: { $0.isWhitespace || $0.unicodeScalars.contains(where: \.isControl) })
        else {
            throw Failure(
                .usage, "--token-file \(name) holds more than a token: it must hold one line, the token alone"
            )
        }
        return token
    }

    /// Overwrites `token` with x's wherever swipectl's own command line holds it (`--token T`,
    /// `--token=T`), so that the process list shows it only until now.
    private static func hideInCommandLine(_ token: String) {
        let count = Int(CommandLine.argc)
        for i in 1..<max(1, count) {
            guard let argument = CommandLine.unsafeArgv[i] else { continue }
            let text = String(cString: argument)
            let start: Int
            if text == token {
                start = 0
            } else if text == "--token=" + token {
                start = "--token=".utf8.count
            } else {
                continue
            }
            memset(argument + start, Int32(UInt8(ascii: "x")), token.utf8.count)
        }
    }
}

extension Unicode.Scalar {
    fileprivate var isControl: Bool { properties.generalCategory == .control }
}

extension String {
    /// Without the characters at either end that `drop` says to drop.
    fileprivate func trimmingCharacters(_ drop: (Character) -> Bool) -> String {
        var s = Substring(self)
        while let first = s.first, drop(first) { s.removeFirst() }
        while let last = s.last, drop(last) { s.removeLast() }
        return String(s)
    }
}
