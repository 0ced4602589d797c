// Connection strings, as the PostgreSQL store reads them before it connects: a string that
// holds a password is refused (it would show in ps), and one that names several hosts is split
// into one per host, which the store tries in turn (PGConnection.init).
import CLibPQ

extension PGConnection {
    /// What the store sets unless the connection string says otherwise (libpq keeps the last
    /// value of a keyword, and these come first). Over TCP a peer that vanished without a word
    /// (a partition, a powered-off host) is noticed within about 15 s instead of the kernel's
    /// two hours, so that writes turn to `unavailable` and the store reconnects.
    ///
    /// A connect gives up after 5 s at start-up, but after 2 s (libpq's shortest) when the store
    /// reconnects: a silent host (a partition, a powered-off primary listed first) then costs 2 s
    /// before the next host is tried, not 5, and the next attempt's connect starts anew instead
    /// of waiting on the kernel's SYN retransmissions, which Debian 12's kernel spaces 1, 2 and
    /// 4 s apart (docs/postgres.md, "Faults, checked": the first `ok` 2.9 s after a heal with
    /// 5 s). A start-up has no such hurry, and a failed one ends the daemon.
    static func defaults(reconnecting: Bool, applicationName: String = "swiped") -> [(String, String)] {
        [
            ("connect_timeout", reconnecting ? "2" : "5"), ("application_name", applicationName),
            ("keepalives_idle", "5"), ("keepalives_interval", "2"), ("keepalives_count", "3"),
            ("tcp_user_timeout", "15000"),
        ]
    }

    /// The connection string as one set of keywords per host, in order, when it names several
    /// (`host` or `hostaddr` lists, with `port` one for all or one per host; a URI's hosts
    /// too); otherwise `[nil]`: libpq connects with the string as it is (and reports what is
    /// wrong with it).
    static func hosts(_ conninfo: String) -> [[(String, String)]?] {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &error) else {
            if let error { PQfreemem(error) }
            return [nil]
        }
        defer { PQconninfoFree(options) }
        var pairs: [(String, String)] = []
        var i = 0
        while let keyword = options[i].keyword {
            if let value = options[i].val { pairs.append((String(cString: keyword), String(cString: value))) }
            i += 1
        }
        func list(_ name: String) -> [String]? {
            pairs.first { $0.0 == name }.map {
                $0.1.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            }
        }
        let names = list("host")
        let addresses = list("hostaddr")
        let ports = list("port")
        let n = max(names?.count ?? 0, addresses?.count ?? 0)
        guard n > 1, names.map({ $0.count == n }) ?? true, addresses.map({ $0.count == n }) ?? true,
            ports.map({ $0.count == 1 || $0.count == n }) ?? true
        else { return [nil] }
        return (0..<n).map { h in
            pairs.map { pair in
                switch pair.0 {
                case "host": ("host", names![h])
                case "hostaddr": ("hostaddr", addresses![h])
                case "port": ("port", ports!.count == 1 ? ports![0] : ports![h])
                default: pair
                }
            }
        }
    }

    /// How the refusal of a password begins.
    static let passwordRefusal = "must not contain a password"

    /// Why `conninfo` must not be used, or nil: it does not parse, or it holds a password (it
    /// would show in `ps` and `systemctl show`). The reason never repeats the string.
    static func refusal(_ conninfo: String) -> String? {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &error) else {
            if let error { PQfreemem(error) }
            return "is not a libpq connection string (key=value pairs, or a postgresql:// URI)"
        }
        defer { PQconninfoFree(options) }
        var i = 0
        while let keyword = options[i].keyword {
            defer { i += 1 }
            guard let value = options[i].val, value.pointee != 0 else { continue }
            let name = String(cString: keyword)
            if name == "password" {
                return PGConnection.passwordRefusal
                    + " (it would show in ps and systemctl show); put it in PGPASSFILE, ~/.pgpass or the unit's LoadCredential="
            }
            // A dbname spelled as a connection string (an `=`, or a URI's prefix: libpq's
            // `recognized_connection_string`) is taken as a database's name here, since libpq
            // expands only the first dbname, which is CONNINFO itself. A password written in it
            // would still show in ps: refuse that. Anything else in it is a name (`a=b` too).
            if name == "dbname" {
                let inner = String(cString: value)
                if inner.contains("=") || inner.hasPrefix("postgresql://") || inner.hasPrefix("postgres://"),
                    inner != conninfo,
                    let why = refusal(inner), why.hasPrefix(PGConnection.passwordRefusal)
                {
                    return why
                }
            }
        }
        return nil
    }
}
