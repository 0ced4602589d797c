// alloc-guard: fails when the drag path allocates (issue 11). After a warm-up, 10,000 drag lines
// go through the drag path (DragPath.swift) while an interposed malloc (Tests/Support/
// AllocCounter) counts this thread's calls to the C allocator; any call fails the guard. Calls,
// not bytes: an allocation freed within the same drag leaves the bytes in use unchanged.
//
//   swift build -c release --product alloc-guard && .build/release/alloc-guard [--self-test]
//
// `make test` runs it on a release build (optimisations remove allocations a debug build
// keeps), and also with --self-test: the guard's own check applied to the drag path made to
// allocate on every drag, which must fail (exit 0 when it does). Not under the sanitizers,
// whose runtimes own malloc.
import CAllocCounter

#if canImport(Glibc)
    import Glibc
#endif

/// The drag path the guard checks: when Session owns it, name Session's here (DragPath.swift).
typealias PathUnderTest = SessionDragPath

let drags = 10_000
/// A whole sweep in steps of 0.25 (DragLines.swift): every shape of the row has its template
/// before counting starts.
let warmUp = Sweep.warmUpReads

let arguments = Array(CommandLine.arguments.dropFirst())
/// `--only TEXT`: the runs whose name contains TEXT, and the control (to find a culprit in gdb).
let only = arguments.firstIndex(of: "--only").flatMap { arguments.dropFirst($0 + 1).first }

/// `drags` reads after `warmUp` ones, through a fresh `P`; nil when `--only` leaves it out.
func run<P: DragPath>(
    _ name: String, _: P.Type, _ shape: LineShape, movie: String = "godfather", linesPerRead: Int = 1,
    expect: Expectation
) -> Run? {
    if let only, expect != .atLeastOnePerDrag, !name.contains(only) { return nil }
    let reads = DragReads(shape, movie: movie, warmUp: warmUp, count: drags, linesPerRead: linesPerRead)
    return Run(name: name, expect: expect, measurement: measure(P.self, reads, warmUp: warmUp))
}

/// Writes a line to fd 1, or 2, straight away (no stdio buffer to reorder them; the C
/// `stderr` global is not concurrency-safe).
func say(_ text: String, fd: Int32 = 1) {
    var line = text + "\n"
    line.withUTF8 { _ = write(fd, $0.baseAddress, $0.count) }
}

func fail(_ message: String) -> Never {
    say("alloc-guard: FAIL: \(message)", fd: 2)
    exit(1)
}

#if DEBUG
    say("alloc-guard: a debug build; make test runs a release build, whose counts are the ones that count")
#endif
// The runtime, libc and the dynamic linker allocated before main: the interposer saw it, or
// it is not in the process's path to malloc at all.
guard alloc_counter_calls_seen() > 0 else {
    fail("the interposer was never called: malloc is not the executable's (a sanitizer build?)")
}

if arguments.first == "--self-test" {
    // The guard's own check, on the path made to allocate: it must fail, naming the calls.
    say("alloc-guard: self-test: the guard's check on the drag path made to allocate, which must FAIL")
    let sabotaged = run(
        "self-test: the drag path plus an array per drag", Allocating<PathUnderTest>.self, .noID,
        expect: .none)!
    say(sabotaged.line)
    let m = sabotaged.measurement
    guard sabotaged.failure != nil, m.allocations >= UInt64(m.drags) else {
        fail("self-test: the guard passed a drag path that allocates on every drag")
    }
    say("alloc-guard: self-test ok: the guard failed as it must (\(m.allocations) calls, \(m.drags) drags)")
    exit(0)
}

say("alloc-guard: \(drags) drags per run, after \(warmUp) drags of warm-up; allocator calls counted")
let runs = [
    run("repeat lane, id first (as SwipedClient writes them)", PathUnderTest.self, .idFirst, expect: .none),
    run("repeat lane, id last", PathUnderTest.self, .idLast, expect: .none),
    run("repeat lane, no id", PathUnderTest.self, .noID, expect: .none),
    run("repeat lane, 4 lines per read", PathUnderTest.self, .idFirst, linesPerRead: 4, expect: .none),
    // Issue 44: the same drags as a browser's WebSocket messages, framed both ways.
    run("repeat lane over a WebSocket, id first", WebSocketDragPath.self, .idFirst, expect: .none),
    run(
        "repeat lane over a WebSocket, 4 messages per read", WebSocketDragPath.self, .idFirst,
        linesPerRead: 4, expect: .none),
    run("repeat lane, compact rows (options)", CompactSessionDragPath.self, .idFirst, expect: .none),
    // Issue 47: crossings reported (four a sweep, each way), a dy in every line, a scrolling touch.
    run("repeat lane, crossings on (options)", CrossingsSessionDragPath.self, .idFirst, expect: .none),
    run("repeat lane, crossings on, dy in every line", CrossingsSessionDragPath.self, .withDy, expect: .none),
    run("repeat lane, a touch that scrolls", CrossingsSessionDragPath.self, .scrolling, expect: .none),
    // Once per gesture in a real client (its first drag), every line here: reported, not checked.
    run("fast path (each line misses the repeat lane)", PathUnderTest.self, .alternating, expect: .reported),
    run(
        "fast path, a movie id of 19 bytes", PathUnderTest.self, .alternating, movie: "saving_private_ryan",
        expect: .reported),
    run(
        "control: the drag path plus an array per drag", Allocating<PathUnderTest>.self, .noID,
        expect: .atLeastOnePerDrag),
].compactMap { $0 }
for r in runs { say(r.line) }
let failures = runs.compactMap(\.failure)
for failure in failures { say("alloc-guard: FAIL: \(failure)", fd: 2) }
exit(failures.isEmpty ? 0 : 1)
