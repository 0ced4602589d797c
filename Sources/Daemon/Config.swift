// The command line and the environment, resolved once at start-up into a plain value.
// Precedence for paths follows systemd's conventions: an explicit option, then the directory
// systemd made for the unit ($RUNTIME_DIRECTORY, $STATE_DIRECTORY), then the user's XDG
// directories, then the working directory, so `swiped` with no options runs anywhere.
import CommandLineParsing
import People
import StoreCore
import StorePostgres
import StoreSQLite
import WebSocket
import Wire

#if canImport(Glibc)
    import Glibc
#endif

public struct Config: Equatable, Sendable {
    public var socketPath: String
    public var stateDirectory: String
    /// `--durability`: the event log's own setting (EventLog's `Durability`, through Store).
    public var durability: Durability = .full
    public var maxLine: Int = 65_536
    /// nil: as many as the file limit allows (`FileLimit`); an explicit value above that is
    /// clamped at start, with a journal line.
    public var maxClients: Int?
    /// Bytes a client's write queue may hold before the daemon stops reading from it; a
    /// subscriber still past it when an event is due is disconnected (`slow-consumer`).
    public var maxQueue: Int = 1 << 20
    /// When set, only peers in this group (or root, or admins) may change state.
    public var writersGroup: String?
    /// `--admins GROUP`: peers in it are admins (root always is).
    public var adminsGroup: String?
    /// `--web-anonymous`: what a WebSocket may do before it signs in.
    public var webAnonymous: AccessRole = .reader
    /// `--web-trust-header`: the header a trusted proxy names its signed-in user in.
    public var webTrustHeader: String?
    /// `--web-trusted-proxy`, repeatable; empty: loopback.
    public var webTrustedProxies: [String] = []
    /// `--web-proxy-role`: a proxy's user's role unless an admin gave the name one.
    public var webProxyRole: AccessRole = .reader
    /// `--rate-limit`: changes per person through the web listener (nil: off).
    public var webRateLimit: RateLimiter.Limit? = Config.defaultWebRateLimit
    /// `--rate-limit-unix`: the same for Unix-socket peers (nil: off, the default).
    public var unixRateLimit: RateLimiter.Limit?
    /// `--postgres` (or `SWIPED_POSTGRES`): a libpq connection string; the event log is then in
    /// PostgreSQL, shared with other daemons, instead of `events.sqlite3` (docs/postgres.md).
    /// Never holds a password (refused when parsed); never logged.
    public var postgres: String?
    /// `--log-level`: journal entries above this priority are not sent (nor written to stderr).
    /// At the default, `info`, the daemon's and the connections' lives are logged, not each
    /// request's outcome: those are `debug` (the event log already holds every change; one journal entry
    /// per change would cost journald more CPU than the change itself, BENCHMARKS.md).
    public var logLevel: Priority = .info
    /// `--metrics ADDRESS:PORT`: serve `/metrics` and `/health` over HTTP on a TCP socket the
    /// daemon binds itself (a socket systemd passes as `metrics` is used instead, if any).
    public var metrics: ListenAddress?
    /// `--web ADDRESS:PORT`, repeatable: the web listener's own TCP sockets (issue 43): the page
    /// and its WebSocket (sockets systemd passes as `web` are served too).
    public var web: [ListenAddress] = []
    /// `--web-root DIR`: the page's files, served from memory (loaded at start and at SIGHUP).
    public var webRoot: String?
    /// `--web-origin ORIGIN`, repeatable: pages of these origins may open a WebSocket too (a
    /// public name behind a proxy; OriginPolicy.swift says which are allowed without it).
    public var webOrigins: [String] = []
    /// `--web-ping SECONDS`: a WebSocket silent this long is pinged, and closed when it stays
    /// silent as long again (0: never).
    public var webPing: Int = 30

    public static let usage = """
        Usage: swiped [OPTIONS]
               swiped backup|export|import|verify … (swiped export --help)

        Serves swipe-action rows and a shared, event-sourced movie list over line-delimited
        JSON on a Unix socket (see protocol.md). Socket activation and Type=notify aware.

        Subcommands (the daemon need not be stopped, except for import):
          backup (--state DIR | --postgres CONNINFO) FILE [--force]
                                 an online, verified copy of the log
          export (--state DIR | --postgres CONNINFO) [--to FILE [--force]]
                                 the whole log as JSON lines (docs/export-format.md)
          import (--state DIR | --postgres CONNINFO) (FILE | - | --from-sqlite FILE)
                                 an export or a SQLite log into an empty store
          verify (--state DIR | --postgres CONNINFO | --backup FILE)
                                 check a log and print its seq and digest

        Options:
          --socket PATH          socket to bind when systemd passed none
                                 (default: $RUNTIME_DIRECTORY/swiped.sock, else
                                 $XDG_RUNTIME_DIR/swiped.sock, else ./swiped.sock)
          --state DIR            state directory holding events.sqlite3, made 0700
                                 (default: $STATE_DIRECTORY, else $XDG_STATE_HOME/swiped,
                                 else ./swiped-state); one others may write is refused,
                                 one they may read served with a warning
          --durability MODE      full (default): a mutation is acknowledged only after fsync;
                                 normal: faster, the last moments may be lost on power loss
          --max-line BYTES       longest request line accepted (default 65536)
          --max-clients N        connections served at once (default: as many as the file
                                 limit allows, less 64; swiped raises its soft limit to
                                 the hard one)
          --max-queue BYTES      per-client write queue cap (default 1048576)
          --writers GROUP        only peers in GROUP (or root, or admins) may change state;
                                 the others are readers (default: $SWIPED_WRITERS, else
                                 every peer is a writer)

        """ + peopleUsage + "\n" + usageTail

    static let usageTail = """
          --postgres CONNINFO    keep the event log in PostgreSQL, shared by every daemon
                                 pointed at the same database, instead of events.sqlite3
                                 (a libpq connection string or postgresql:// URI; default:
                                 $SWIPED_POSTGRES, else SQLite). It must not contain a
                                 password: use PGPASSFILE, ~/.pgpass or LoadCredential=
          --log-level LEVEL      journal entries (and their lines on stderr) up to LEVEL:
                                 emerg, alert, crit, err, warning, notice, info (default)
                                 or debug, or 0-7; debug adds one entry per request
                                 outcome (a change, a refusal)
          --metrics ADDRESS:PORT serve Prometheus metrics (GET /metrics) and a health check
                                 (GET /health) over HTTP on this TCP address, e.g.
                                 127.0.0.1:9464 or [::1]:9464 (default: none, unless
                                 systemd passes a socket named metrics)
          --web ADDRESS:PORT     serve the web page and its WebSocket (GET /ws) over HTTP on
                                 this TCP address, e.g. 127.0.0.1:8080 or [::1]:8080;
                                 repeatable (default: none, unless systemd passes sockets
                                 named web)
          --web-root DIR         the web page's files (default: none: only the WebSocket)
          --web-origin ORIGIN    pages of ORIGIN (https://name[:port], or name[:port] for
                                 http and https) may open a WebSocket, beside the page's
                                 own address; repeatable (for a public name behind a proxy)
          --web-ping SECONDS     ping a WebSocket silent this long, close it when it stays
                                 silent as long again (default 30; 0: never)
          --help                 print this text
          --version              print the version

        Signals: TERM/INT stop gracefully (exit 0); HUP re-reads the writers and admins
        groups and re-judges every connection, and re-reads --web-root.
        """

    public enum ParseOutcome: Equatable, Sendable {
        case run(Config)
        case help
        case version
        case usageError(String)
    }

    /// Every option of the daemon, with what its value is when missing (or given empty, for
    /// those whose value may not be).
    static let options: [OptionSpec] =
        [
            .flag("--help", aliases: ["-h"]), .flag("--version"),
            .value("--socket", needs: "a path", emptyIsMissing: true),
            .value("--state", needs: "a directory", emptyIsMissing: true),
            .value("--durability", needs: "full or normal"), .value("--max-line"), .value("--max-clients"),
            .value("--max-queue"), .value("--writers", needs: "a group name"),
            .value(
                "--postgres", needs: "a connection string, e.g. 'host=/run/postgresql dbname=swiped'",
                emptyIsMissing: true),
            .value("--log-level", needs: "a level: \(logLevels)"),
            .value("--metrics", needs: "a numeric ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464"),
            .value("--web", needs: "a numeric ADDRESS:PORT, e.g. 127.0.0.1:8080 or [::1]:8080"),
            .value("--web-root", needs: "a directory", emptyIsMissing: true),
            .value("--web-origin", needs: "an origin"), .value("--web-ping", needs: "a number of seconds"),
        ] + peopleOptions

    static let logLevels = "emerg, alert, crit, err, warning, notice, info, debug (or 0-7)"

    public static func parse(_ arguments: [String], environment: [String: String]) -> ParseOutcome {
        func nonEmpty(_ key: String) -> String? {
            guard let value = environment[key], !value.isEmpty else { return nil }
            return value
        }
        var socket: String?
        var state: String?
        var config = Config(socketPath: "", stateDirectory: "")
        config.writersGroup = nonEmpty("SWIPED_WRITERS")
        config.adminsGroup = nonEmpty("SWIPED_ADMINS")
        var postgresFrom = "SWIPED_POSTGRES"
        config.postgres = nonEmpty("SWIPED_POSTGRES")
        // In order, one at a time: `--help` is answered before anything after it is read.
        var scanner = ArgumentScanner(arguments, options: options)
        do throws(ArgumentError) {
            while let argument = try scanner.next() {
                switch argument {
                case .flag("--help"): return .help
                case .flag("--version"): return .version
                case .option("--socket", let v): socket = v
                case .option("--state", let v): state = v
                case .option("--durability", let v):
                    config.durability = try ArgumentValues.oneOf(
                        "--durability", v, Durability.allCases.map { ($0.rawValue, $0) })
                case .option("--max-line", let v):
                    config.maxLine = try ArgumentValues.integer("--max-line", v, in: 256...(64 << 20))
                case .option("--max-clients", let v):
                    config.maxClients = try ArgumentValues.integer("--max-clients", v, in: 1...1_000_000)
                case .option("--max-queue", let v):
                    config.maxQueue = try ArgumentValues.integer("--max-queue", v, in: 4096...(1 << 30))
                case .option("--writers", let v): config.writersGroup = v.isEmpty ? nil : v
                case .option("--postgres", let v):
                    config.postgres = v
                    postgresFrom = "--postgres"
                case .option("--log-level", let v):
                    guard let level = Priority(name: v) else {
                        throw .invalid("--log-level must be one of \(logLevels)")
                    }
                    config.logLevel = level
                case .option(let name, let v):
                    if try !parseListener(name, v, into: &config) { try parsePeople(name, v, into: &config) }
                case .flag(let name):
                    preconditionFailure("\(name) is in Config.options but has no case here")
                case .positional(let p):
                    throw .unexpectedArgument(p)
                }
            }
        } catch {
            return .usageError(error.description)
        }
        if let conninfo = config.postgres, let why = PostgresStore.refusal(conninfo: conninfo) {
            return .usageError("\(postgresFrom) \(why)")
        }
        config.socketPath = socket ?? defaultSocketPath(nonEmpty)
        config.stateDirectory = state ?? defaultStateDirectory(nonEmpty)
        return .run(config)
    }

    /// The HTTP listeners' options: the metrics listener's, the web listener's (issue 43);
    /// false when `option` is none of them.
    static func parseListener(_ option: String, _ value: String, into config: inout Config)
        throws(ArgumentError) -> Bool
    {
        switch option {
        case "--metrics":
            guard let address = ListenAddress(value) else {
                throw .invalid("--metrics needs a numeric ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464")
            }
            config.metrics = address
        case "--web":
            guard let address = ListenAddress(value) else {
                throw .invalid("--web needs a numeric ADDRESS:PORT, e.g. 127.0.0.1:8080 or [::1]:8080")
            }
            if !config.web.contains(address) { config.web.append(address) }
        case "--web-root":
            config.webRoot = value
        case "--web-origin":
            do {
                _ = try OriginPolicy(configured: [value])
            } catch {
                throw .invalid("--web-origin: \(error)")
            }
            config.webOrigins.append(value)
        case "--web-ping":
            config.webPing = try ArgumentValues.integer("--web-ping", value, in: 0...86_400)
        default:
            return false
        }
        return true
    }

    /// Without --socket: systemd's RuntimeDirectory=, then the user's runtime directory, then
    /// the working directory (`make run`).
    static func defaultSocketPath(_ nonEmpty: (String) -> String?) -> String {
        nonEmpty("RUNTIME_DIRECTORY").map { firstPath($0) + "/swiped.sock" }
            ?? nonEmpty("XDG_RUNTIME_DIR").map { $0 + "/swiped.sock" }
            ?? "./swiped.sock"
    }

    /// Without --state: systemd's StateDirectory=, then the user's state directory, then the
    /// working directory.
    static func defaultStateDirectory(_ nonEmpty: (String) -> String?) -> String {
        nonEmpty("STATE_DIRECTORY").map(firstPath)
            ?? nonEmpty("XDG_STATE_HOME").map { $0 + "/swiped" }
            ?? "./swiped-state"
    }

    /// systemd passes several directories separated by ':' when a unit names several.
    private static func firstPath(_ list: String) -> String {
        String(list.split(separator: ":", omittingEmptySubsequences: true).first ?? Substring(list))
    }
}

/// `--metrics`, `--web`: a numeric IPv4 or IPv6 address and a port (no host names: nothing is
/// looked up at start).
public struct ListenAddress: Equatable, Sendable, CustomStringConvertible {
    public let host: String
    public let port: UInt16
    public let isIPv6: Bool

    /// `127.0.0.1:9464`, `[::1]:9464`; nil when it is not that.
    public init?(_ text: String) {
        let host: Substring
        let port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":")
            else {
                return nil
            }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
            isIPv6 = true
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
            isIPv6 = false
        }
        guard let number = UInt16(port), number > 0 else { return nil }
        var buffer = in6_addr()
        guard inet_pton(isIPv6 ? AF_INET6 : AF_INET, String(host), &buffer) == 1 else { return nil }
        self.host = String(host)
        self.port = number
    }

    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
