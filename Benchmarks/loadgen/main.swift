// loadgen: a closed-loop load generator for line protocols on Unix sockets (swiped, the echo
// server, redis-server with inline commands), plus the extra measurements of issue 6. See
// Benchmarks/run.sh and BENCHMARKS.md for how `make bench` runs it. Pin it away from the server:
//   taskset -c 0 .build/release/loadgen --socket S --op ping -c 16 -w 16 -d 5
#if canImport(Glibc)
    import Glibc
#endif

let usage = """
    Usage: loadgen --socket PATH [load options]        closed-loop load
           loadgen --socket PATH --idle N --pid PID     N idle clients: the server's RSS
           loadgen --socket PATH --fanout N [--rounds R] [--movie ID] [--readers T] [--redis]
                                                        one change to N subscribers, read
                                                        by T threads (default 1); with
                                                        --redis, one PUBLISH of a message
                                                        as long as swiped's event line to N
                                                        SUBSCRIBE'd redis clients
           loadgen --socket PATH --startup -- SWIPED ARGS...
                                                        time to READY=1 and to hello
           loadgen --fill DIR [--events N]              write DIR/events.sqlite3 (N events)
           loadgen --fill DIR --movies N                write DIR/events.sqlite3: the seed and
                                                        N movies added ("Movie 1", movie_1…)
           loadgen --socket B --cross A [--rounds R] [--pause S] [--movie ID] [--slow MS]
                                                        a change on daemon A reaching a
                                                        subscriber on daemon B (PostgreSQL);
                                                        --slow: also print each round slower
                                                        than MS, with the time it started (UTC)

    Load options:
      -c, --connections N   connections (default 16)
      -w, --window W        requests in flight per connection (default 16)
      -t, --threads T       threads, each with one epoll set (default 1)
      -d, --duration S      measured seconds (default 5)
          --warmup S        seconds before measuring (default 1)
          --line TEXT       a request line (repeat to send several in turn)
          --op NAME         ping | drag | release-cycle | toggle | list
          --movie ID        movie for drag/release-cycle/toggle (default matrix)
          --expect-lines    every line read is one reply (echo, redis); otherwise lines that
                            start with {"event" (swiped's hello and events) are not replies
          --label NAME      name on the RESULT line
          --pid PID         the server's pid: also report its CPU time per reply (all its
                            threads, from /proc/PID/task/*/schedstat)
    Prints a RESULT line: requests/s and latency p50/p99/p99.9 in µs.
    """

func ops(_ name: String, movie: String) -> [String]? {
    switch name {
    case "ping": return ["{\"op\":\"ping\"}"]
    case "list": return ["{\"op\":\"list\"}"]
    case "drag": return ["{\"op\":\"drag\",\"movie\":\"\(movie)\",\"dx\":-60}"]
    case "toggle": return ["{\"op\":\"toggle-watched\",\"movie\":\"\(movie)\"}"]
    case "release-cycle":
        // drag and release open the row at -70; drag back and release below 0.8·W close it.
        return [
            "{\"op\":\"drag\",\"movie\":\"\(movie)\",\"dx\":-60}",
            "{\"op\":\"release\",\"movie\":\"\(movie)\",\"dx\":-60}",
            "{\"op\":\"drag\",\"movie\":\"\(movie)\",\"dx\":30}",
            "{\"op\":\"release\",\"movie\":\"\(movie)\",\"dx\":30}",
        ]
    default: return nil
    }
}

func main() {
    var spec = LoadSpec()
    var label = ""
    var op: String?
    var lines: [String] = []
    var movie = "matrix"
    var idle: Int?
    var fanout: Int?
    var rounds = 20
    var readers = 1
    var redis = false
    var pid: Int32 = 0
    var startup: [String]?
    var fill: String?
    var fillEvents = 1_000_000
    var fillMovies: Int?
    var cross: String?
    var slow: Double?
    var pause = 0.02

    var arguments = Array(CommandLine.arguments.dropFirst())
    var index = 0
    func value() -> String {
        index += 1
        guard index < arguments.count else { fail("\(arguments[index - 1]) needs a value\n\(usage)") }
        return arguments[index]
    }
    func number(_ name: String) -> Double {
        let text = value()
        guard let x = Double(text), x >= 0 else { fail("\(name) must be a number, not '\(text)'") }
        return x
    }
    func integer(_ name: String) -> Int {
        let text = value()
        guard let x = Int(text), x > 0 else { fail("\(name) must be a positive whole number, not '\(text)'") }
        return x
    }
    while index < arguments.count {
        switch arguments[index] {
        case "--socket", "-s": spec.socket = value()
        case "--connections", "-c": spec.connections = integer("--connections")
        case "--window", "-w": spec.window = integer("--window")
        case "--threads", "-t": spec.threads = integer("--threads")
        case "--duration", "-d": spec.duration = number("--duration")
        case "--warmup": spec.warmup = number("--warmup")
        case "--line": lines.append(value())
        case "--op": op = value()
        case "--movie": movie = value()
        case "--expect-lines": spec.expectLines = true
        case "--label": label = value()
        case "--idle": idle = integer("--idle")
        case "--pid":
            pid = Int32(integer("--pid"))
            spec.serverPID = pid
        case "--fanout": fanout = integer("--fanout")
        case "--rounds": rounds = integer("--rounds")
        case "--readers": readers = integer("--readers")
        case "--redis": redis = true
        case "--startup":
            guard let dash = arguments.firstIndex(of: "--"), dash + 1 < arguments.count else {
                fail("--startup needs -- SWIPED ARGS...")
            }
            startup = Array(arguments[(dash + 1)...])
            arguments.removeSubrange(dash...)
        case "--fill": fill = value()
        case "--events": fillEvents = integer("--events")
        case "--movies": fillMovies = integer("--movies")
        case "--cross": cross = value()
        case "--pause": pause = number("--pause")
        case "--slow": slow = number("--slow")
        case "--help", "-h":
            print(usage)
            exit(0)
        default: fail("unknown option '\(arguments[index])'\n\(usage)")
        }
        index += 1
    }

    if let fill {
        if let fillMovies {
            runFill(directory: fill, movies: fillMovies)
        } else {
            runFill(directory: fill, count: fillEvents)
        }
        exit(0)
    }
    guard !spec.socket.isEmpty else { fail("--socket is required\n\(usage)") }
    if let startup {
        runStartup(arguments: startup, socket: spec.socket, timeout: 30)
        exit(0)
    }
    if let idle {
        guard pid > 0 else { fail("--idle needs --pid of the server") }
        runIdle(socket: spec.socket, count: idle, pid: pid, hold: 1)
        exit(0)
    }
    if let cross {
        runCross(
            socket: spec.socket, writerSocket: cross, rounds: rounds, movie: movie, pause: pause,
            slowMillis: slow)
        exit(0)
    }
    if let fanout {
        runFanout(
            socket: spec.socket, count: fanout, rounds: rounds, movie: movie, readers: readers,
            server: redis ? .redis : .swiped)
        exit(0)
    }

    if let op {
        guard let menu = ops(op, movie: movie) else {
            fail("unknown --op '\(op)' (ping, drag, release-cycle, toggle, list)")
        }
        lines += menu
    }
    guard !lines.isEmpty else { fail("give --line or --op\n\(usage)") }
    spec.lines = lines.map { Array(($0 + "\n").utf8) }
    if label.isEmpty { label = op ?? "line" }

    let (result, seconds) = runLoad(spec)
    let rate = Double(result.replies) / seconds
    let h = result.histogram
    print(
        "\(label): \(spec.connections) connections × window \(spec.window), \(spec.threads) thread(s), "
            + "\(formatted(spec.duration, digits: 1)) s: \(Int(rate.rounded())) requests/s, latency p50 \(micros(h.quantile(0.5))) µs, "
            + "p99 \(micros(h.quantile(0.99))) µs, p99.9 \(micros(h.quantile(0.999))) µs, max \(micros(h.maxValue)) µs, "
            + "errors \(result.errors), events \(result.events)")
    let cpu = result.serverCPUPerReply.map { " server_cpu_us=\(formatted($0 / 1000, digits: 2))" } ?? ""
    print(
        "RESULT label=\(label)\(cpu) rps=\(Int(rate.rounded())) p50_us=\(micros(h.quantile(0.5))) p99_us=\(micros(h.quantile(0.99))) "
            + "p999_us=\(micros(h.quantile(0.999))) max_us=\(micros(h.maxValue)) errors=\(result.errors) replies=\(result.replies) "
            + "connections=\(spec.connections) window=\(spec.window)")
}

main()
