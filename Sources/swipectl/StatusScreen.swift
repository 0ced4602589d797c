// `swipectl status`: the daemon's `status` reply as one screen, as `systemctl status` or
// `redis-cli info` show theirs, and the exit status that makes it a health check. Pure: the
// reply's JSON in, the text and the status out (StatusCommand.swift sends the op and prints
// this).
//
// Exit status: 0 healthy; 1 degraded (the store unavailable or reconnecting); 3 the daemon
// cannot be reached (the caller's, as for every command); 4 the daemon answered, but not with a
// status (an older daemon without the op says `unknown-op`: said so, and not as a degraded
// store).
import JSONCodec
import Metrics

struct StatusScreen: Equatable {
    var text: String
    var exitCode: Int32

    static let healthy: Int32 = 0
    static let degraded: Int32 = 1
    static let noStatus: Int32 = 4

    /// The screen for `reply`, one line of the daemon's (`socket`: where it was asked, for
    /// the message to an older daemon).
    static func render(reply: JSONObject, socket: String) -> StatusScreen {
        if reply["ok"]?.boolValue != true {
            let error = reply["error"]?.objectValue
            let code = error?["code"]?.stringValue ?? "?"
            if code == "unknown-op" {
                return StatusScreen(
                    text:
                        "swiped at \(socket) has no status op: it is older than this swipectl (its reply: unknown-op)\n",
                    exitCode: noStatus)
            }
            return StatusScreen(
                text:
                    "swiped at \(socket) refused status: \(code): \(error?["message"]?.stringValue ?? "")\n",
                exitCode: noStatus)
        }
        guard let status = reply["status"]?.objectValue else {
            return StatusScreen(
                text: "swiped at \(socket) answered status without a status object\n", exitCode: noStatus)
        }
        var reader = Reader(status)
        let text = reader.screen()
        if let missing = reader.missing {
            return StatusScreen(
                text: "swiped at \(socket) answered a status this swipectl cannot read (no \(missing))\n",
                exitCode: noStatus)
        }
        return StatusScreen(text: text, exitCode: reader.storeState == "ok" ? healthy : degraded)
    }

    /// Reads the reply's fields, remembering the first one missing.
    struct Reader {
        let status: JSONObject
        var missing: String?
        var storeState = ""

        init(_ status: JSONObject) { self.status = status }

        mutating func object(_ path: String...) -> JSONObject {
            var o = status
            for key in path {
                guard let next = o[key]?.objectValue else {
                    note(path.joined(separator: "."))
                    return JSONObject([])
                }
                o = next
            }
            return o
        }

        mutating func number(_ o: JSONObject, _ key: String) -> Double {
            guard let n = o[key]?.numberValue?.double else {
                note(key)
                return 0
            }
            return n
        }

        mutating func string(_ o: JSONObject, _ key: String) -> String {
            guard let s = o[key]?.stringValue else {
                note(key)
                return ""
            }
            return s
        }

        mutating func note(_ key: String) { if missing == nil { missing = key } }

        mutating func screen() -> String {
            let server = object("server")
            let store = object("store")
            let clients = object("clients")
            let process = object("process")
            storeState = string(store, "state")
            let uptime = number(server, "uptime")
            var lines: [String] = []
            let mark = storeState == "ok" ? "●" : "×"
            let pid = server["pid"]?.numberValue?.int.map { ", pid \($0)" } ?? ""
            lines.append(
                "\(mark) swiped \(string(server, "version")) (protocol \(Int(number(server, "protocol"))))\(pid): "
                    + (storeState == "ok" ? "healthy" : "degraded, the store is \(storeState)"))
            lines.append(
                "  Up:       \(Format.duration(uptime)), since \(Format.time(string(server, "started")))")
            storeLines(store, &lines)
            var c: [String: Int] = [:]
            for key in [
                "connected", "peak", "subscribers", "sharers", "watchers", "recorders", "writers", "refused",
                "dropped",
            ] {
                c[key] = Int(number(clients, key))
            }
            // By transport, when the daemon says (one before the web listener does not).
            let transports = clients["transports"]?.objectValue.map { t in
                ["unix", "websocket"].map { "\(t[$0]?.numberValue?.int ?? 0) \($0)" }.joined(separator: ", ")
                    + "; "
            }
            lines.append(
                "  Clients:  \(c["connected"]!) connected (\(transports ?? "")peak \(c["peak"]!)): "
                    + "\(c["subscribers"]!) subscribed, \(c["sharers"]!) sharing, \(c["watchers"]!) watching, "
                    + "\(c["recorders"]!) recording, \(c["writers"]!) writers")
            lines.append(
                "            \(c["refused"]!) refused (too-many-clients), \(c["dropped"]!) dropped (slow-consumer) since start"
            )
            if let web = status["web"]?.objectValue {
                lines.append(
                    "  Web:      refused "
                        + counts(web["refused"]?.objectValue ?? JSONObject([]), uptime: nil))
                lines.append(
                    "            close frames "
                        + counts(web["closeCodes"]?.objectValue ?? JSONObject([]), uptime: nil))
            }
            lines.append("  Requests: " + counts(object("requests"), uptime: uptime))
            lines.append("  Errors:   " + counts(object("errors"), uptime: nil))
            latencyLines(&lines)
            let commits = object("commits")
            let transactions = number(commits, "transactions")
            let events = number(commits, "events")
            lines.append(
                "  Commits:  \(Int(transactions)) transactions, \(Int(events)) events"
                    + (transactions > 0
                        ? ", " + String(format1: events / transactions, " per transaction") : ""))
            var memory = "  Process:  "
            memory +=
                process["residentBytes"]?.numberValue.map { Format.bytes($0.double) + " resident" }
                ?? "memory unknown"
            memory += process["openFiles"]?.numberValue?.int.map { ", \($0) open files" } ?? ""
            lines.append(memory)
            if let maxClients = process["maxClients"]?.numberValue?.int {
                lines.append(
                    "  Limits:   \(maxClients) clients, "
                        + "\(Format.bytes(number(process, "maxQueue"))) queue, \(Format.bytes(number(process, "maxLine"))) line, "
                        + "\(Int(number(process, "fileLimit"))) files")
            }
            return lines.joined(separator: "\n") + "\n"
        }

        mutating func storeLines(_ store: JSONObject, _ lines: inout [String]) {
            lines.append(
                "  Store:    \(string(store, "kind")), \(storeState) since \(Format.time(string(store, "since")))"
            )
            lines.append(
                "            seq \(Int(number(store, "seq"))), \(Int(number(store, "events"))) events, "
                    + "snapshot at seq \(Int(number(store, "snapshotSeq")))")
            if let path = store["path"]?.stringValue {
                lines.append(
                    "            \(path)"
                        + (store["bytes"]?.numberValue.map { " (\(Format.bytes($0.double)))" } ?? ""))
            } else if let bytes = store["bytes"]?.numberValue {
                lines.append("            \(Format.bytes(bytes.double))")
            }
            if let host = store["host"]?.stringValue {
                let port = store["port"]?.numberValue?.int.map { ":\($0)" } ?? ""
                lines.append("            \(host)\(port), database \(store["database"]?.stringValue ?? "?")")
            }
            if let lastRead = store["lastRead"] {
                lines.append(
                    "            last read of other daemons' events: "
                        + (lastRead.numberValue.map { Format.duration($0.double) + " ago" } ?? "none yet"))
            }
        }

        /// "124 since start (2.0/s): drag 100, toggle-watched 20, …": the largest first, zeros left out.
        func counts(_ o: JSONObject, uptime: Double?) -> String {
            let pairs = o.members.compactMap { m in m.value.numberValue?.int.map { (m.key, $0) } }.filter {
                $0.1 > 0
            }
            let total = pairs.reduce(0) { $0 + $1.1 }
            var text = "\(total) since start"
            if let uptime, uptime > 0 { text += " (\(Format.rate(Double(total) / uptime)))" }
            let sorted = pairs.enumerated().sorted { ($0.element.1, -$0.offset) > ($1.element.1, -$1.offset) }
            if !sorted.isEmpty {
                text += ": " + sorted.map { "\($0.element.0) \($0.element.1)" }.joined(separator: ", ")
            }
            return text
        }

        mutating func latencyLines(_ lines: inout [String]) {
            let latency = object("latency")
            let rows: [(String, JSONObject)] =
                ["drag", "read", "mutation", "fanout"].map {
                    ($0, latency[$0]?.objectValue ?? JSONObject([]))
                }
                + [("commit", object("commits", "duration"))]
            lines.append(
                "  Latency:  " + pad("", 8) + pad("count", 9, right: true) + pad("p50", 10, right: true)
                    + pad("p99", 10, right: true) + pad("p99.9", 10, right: true))
            for (name, h) in rows {
                let buckets = Reader.buckets(h)
                var line =
                    "            " + pad(name, 8)
                    + pad("\(h["count"]?.numberValue?.int ?? 0)", 9, right: true)
                for q in [0.5, 0.99, 0.999] {
                    line += pad(Reader.quantile(q, of: buckets) ?? "-", 10, right: true)
                }
                lines.append(line)
            }
        }

        /// A percentile as a person reads it. One in the first bucket says only "at most its
        /// bound": the daemon reads the clock once per wake-up, so a request answered in the
        /// wake-up that read it counts 0 there, and a figure inside the bucket would be made up.
        static func quantile(_ q: Double, of buckets: [Bucket]) -> String? {
            guard let value = Bucket.quantile(q, of: buckets) else { return nil }
            if let first = buckets.first, first.lower == 0, let upper = first.upper, value <= upper {
                return "≤ " + Format.seconds(upper)
            }
            return Format.seconds(value)
        }

        /// The reply's `[[lower, upper, count], …]`.
        static func buckets(_ h: JSONObject) -> [Bucket] {
            (h["buckets"]?.arrayValue ?? []).compactMap { b in
                guard let a = b.arrayValue, a.count == 3, let lower = a[0].numberValue?.double,
                    let count = a[2].numberValue?.int, count >= 0
                else { return nil }
                return Bucket(lower: lower, upper: a[1].numberValue?.double, count: UInt64(count))
            }
        }

        func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
            let fill = String(repeating: " ", count: max(0, width - s.count))
            return right ? fill + s : s + fill
        }
    }
}

/// Numbers as a person reads them.
enum Format {
    /// "8.2 µs", "1.31 ms", "2.5 s"; over the last bound: "> 17.2 s" is the caller's.
    static func seconds(_ s: Double) -> String {
        if s < 1e-3 { return significant(s * 1e6) + " µs" }
        if s < 1 { return significant(s * 1e3) + " ms" }
        return significant(s) + " s"
    }

    /// Three significant digits at most: 8.19, 16.4, 131.
    static func significant(_ x: Double) -> String {
        if x >= 100 { return String(Int(x.rounded())) }
        if x >= 10 { return String(format1: x, "") }
        return String(format2: x)
    }

    static func duration(_ seconds: Double) -> String {
        var s = Int(seconds)
        let days = s / 86_400
        s %= 86_400
        let hours = s / 3_600
        s %= 3_600
        let minutes = s / 60
        s %= 60
        if days > 0 { return "\(days)d \(hours)h \(minutes)m" }
        if hours > 0 { return "\(hours)h \(minutes)m \(s)s" }
        if minutes > 0 { return "\(minutes)m \(s)s" }
        if seconds < 1 && seconds > 0 { return Format.seconds(seconds) }
        return "\(s)s"
    }

    static func bytes(_ n: Double) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var x = n
        var unit = 0
        while x >= 1024 && unit < units.count - 1 {
            x /= 1024
            unit += 1
        }
        return unit == 0 ? "\(Int(x)) B" : String(format1: x, " \(units[unit])")
    }

    static func rate(_ perSecond: Double) -> String {
        String(format1: perSecond, "/s")
    }

    /// "2025-12-03T09:00:00.000000Z" as "2025-12-03 09:00:00 UTC".
    static func time(_ rfc3339: String) -> String {
        guard rfc3339.count >= 19 else { return rfc3339 }
        let date = rfc3339.prefix(10)
        let time = rfc3339.dropFirst(11).prefix(8)
        return "\(date) \(time) UTC"
    }
}

extension String {
    /// `x` with one decimal, then `suffix` ("1.3 KiB"), without Foundation.
    init(format1 x: Double, _ suffix: String) {
        let tenths = Int((x * 10).rounded())
        self = "\(tenths / 10).\(tenths % 10)\(suffix)"
    }

    /// `x` with two decimals.
    init(format2 x: Double) {
        let hundredths = Int((x * 100).rounded())
        let cents = hundredths % 100
        self = "\(hundredths / 100).\(cents < 10 ? "0" : "")\(cents)"
    }
}
