// tui-bench's second part: `swipectl tui` on a long list (issue 33). See main.swift.
#if canImport(Glibc)
    import Glibc
#endif

/// A blocking connection to the daemon's socket.
func connectUnix(_ path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
    let r = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard fd >= 0, r == 0 else { fail("cannot connect to \(path): \(String(cString: strerror(errno)))") }
    return fd
}

/// Adds movies "Movie 1" … "Movie N" through the daemon: 1,000 `add`s written at once, then
/// their 1,000 replies read, and so on (the daemon commits each batch in a few transactions).
func addMovies(_ count: Int, socket path: String) {
    let fd = connectUnix(path)
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    func readLines(_ wanted: Int) {
        var lines = 0
        while lines < wanted {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { fail("the daemon closed the connection while movies were added") }
            if contains(Array(buffer[0..<n]), #""ok":false"#) {
                fail("an add failed: \(String(decoding: buffer[0..<n], as: UTF8.self).prefix(300))")
            }
            lines += buffer[0..<n].filter { $0 == UInt8(ascii: "\n") }.count
        }
    }
    readLines(1)  // hello
    var added = 0
    while added < count {
        let batch = min(1000, count - added)
        var text = ""
        for i in 0..<batch { text += #"{"op":"add","title":"Movie \#(added + i + 1)"}"# + "\n" }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            guard n > 0 else { fail("write to the daemon failed") }
            offset += n
        }
        readLines(batch)
        added += batch
    }
}

/// The daemon's ten movies and `count` − 10 more; the TUI's first screen, search keys and j.
func longList(_ count: Int, bin: String) {
    var template = Array("/tmp/tui-bench.XXXXXX".utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        fail("mkdtemp: \(String(cString: strerror(errno)))")
    }
    let dir = String(cString: made)
    let socketPath = "\(dir)/swiped.sock"
    let daemon = spawn(
        ["\(bin)/swiped", "--socket", socketPath, "--state", "\(dir)/state", "--durability", "normal"],
        stdio: nil)
    let started = now()
    while access(socketPath, F_OK) != 0 {
        if now() - started > 10 { fail("swiped did not create \(socketPath)") }
        usleep(10_000)
    }
    let adding = now()
    addMovies(count - 10, socket: socketPath)
    let added = now() - adding

    let (masterFD, slave) = openPTY()
    let master = Master(fd: masterFD)
    let spawned = now()
    let tui = spawn(["\(bin)/swipectl", "--socket", socketPath, "tui"], stdio: slave)
    close(slave)
    guard master.read(until: 30, { contains($0, "The Godfather") && contains($0, "connected") }) != nil else {
        fail("the front end did not draw the list of \(count) movies")
    }
    let firstScreen = now() - spawned
    // Frames wrapped in synchronized output from here on, so that each one's end is seen.
    master.write("\u{1B}[?2026;2$y")
    master.write("j")
    guard master.read(until: 5, endsFrame) != nil else { fail("frames are not wrapped in mode 2026") }
    _ = master.read(until: 0.3) { _ in false }

    /// Milliseconds from each key to the end of its frame.
    func time(_ keys: [String]) -> [Double] {
        keys.map { key in
            let sent = now()
            master.write(key)
            guard master.read(until: 5, endsFrame) != nil else { fail("no frame within 5 s for \(key)") }
            let took = now() - sent
            usleep(20_000)  // past the 60-frames-a-second cap
            return took
        }
    }
    let search = time(["/"] + "movie 77777".map(String.init) + Array(repeating: "\u{7F}", count: 5))
    master.write("\u{1B}")  // Escape ends the search
    _ = master.read(until: 0.3) { _ in false }
    let moves = time(Array(repeating: "j", count: 20)).sorted()
    let typed = search.dropFirst().sorted()
    master.write("q")
    _ = master.read(until: 2) { contains($0, "\u{1B}[?1049l") }
    reap(tui, signal: nil)
    reap(daemon, signal: SIGTERM)
    close(masterFD)
    _ = system("rm -rf '\(dir)'")
    print(
        "tui-bench: \(count) movies (added in \(ms(added)) ms): first screen \(ms(firstScreen)) ms; "
            + "search keys p50 \(ms(typed[typed.count / 2])) ms, max \(ms(typed.last!)) ms "
            + "(the first letter \(ms(search[1])) ms, a backspace \(ms(search.last!)) ms); "
            + "j p50 \(ms(moves[moves.count / 2])) ms, max \(ms(moves.last!)) ms")
}
