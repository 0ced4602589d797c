import Movies
import SwipeEngine
import Terminal
import XCTest

/// Drives a `TuiStateMachine` the way the Composable Architecture's TestStore drives a reducer:
/// each fact is checked for exactly the actions it returns and exactly the state it leaves
/// (the test says every change; anything else that changed fails, naming the fields).
struct TuiTestStore {
    var machine: TuiStateMachine

    init(_ options: TuiOptions = TuiOptions(socket: "./swiped.sock"), columns: Int = 80, lines: Int = 24) {
        machine = TuiStateMachine(options, columns: columns, lines: lines)
    }

    var state: TuiState { machine.state }

    mutating func check(
        _ fact: (inout TuiStateMachine) -> [TuiAction], _ actions: [TuiAction],
        file: StaticString = #filePath, line: UInt = #line, _ change: (inout TuiState) -> Void = { _ in }
    ) {
        var expected = machine.state
        change(&expected)
        // Where each row is follows from the entries: a test states the entries, and the
        // machine's own bookkeeping of their positions must agree with them.
        expected.positions = TuiState.positions(of: expected.entries)
        let got = fact(&machine)
        XCTAssertEqual(got, actions, "actions", file: file, line: line)
        if machine.state != expected {
            XCTFail("state differs in: \(Self.differences(machine.state, expected))", file: file, line: line)
        }
    }

    private static func equal(_ a: Any, _ b: Any) -> Bool {
        func open<T: Equatable>(_ a: T) -> Bool { (b as? T) == a }
        guard let a = a as? any Equatable else { return true }
        return open(a)
    }

    /// The fields of `got` that are not `expected`'s, with both values.
    static func differences(_ got: TuiState, _ expected: TuiState) -> String {
        let a = Mirror(reflecting: got).children
        let b = Array(Mirror(reflecting: expected).children)
        var out: [String] = []
        for (i, child) in a.enumerated() {
            let x = String(reflecting: child.value)
            let y = String(reflecting: b[i].value)
            if x != y || !Self.equal(child.value, b[i].value) {
                out.append(
                    "\n  \(child.label ?? "?"): got \(x)\n  \(String(repeating: " ", count: (child.label ?? "?").count)) expected \(y)"
                )
            }
        }
        return out.joined()
    }
}

/// The movies and rows the tests use, and the engine that renders the rows as the daemon would.
enum Fixture {
    static let matrix = Movie(id: "matrix", title: "The Matrix", image: "matrix", version: 1)
    static let godfather = Movie(
        id: "godfather", title: "The Godfather", image: "godfather", watched: true, version: 2)
    static let seven = Movie(id: "seven", title: "Se7en", image: "seven", version: 3)
    static let movies = [matrix, godfather, seven]

    /// An 80-column terminal's rows: 400 points.
    static func engine(_ layout: Layout = MovieLayout.standard) -> SwipeList {
        SwipeList(layout: layout, viewport: Viewport(width: 400))
    }

    /// `row` after `inputs`, as the daemon's engine renders it.
    static func render(_ row: String, _ inputs: [Input], layout: Layout = MovieLayout.standard) throws
        -> RowRender
    {
        var list = engine(layout)
        for input in inputs { _ = try list.send(input) }
        return list.render(row, flags: [])
    }

    /// The motion `apply` gives a row that was at rest (or moving as `from`) when `row` came.
    static func motion(_ row: RowRender, at now: Double, from: Motion = Motion(at: 0)) -> Motion {
        var motion = from
        let spring =
            row.phase == .dragging
            ? Spring(response: 0, dampingFraction: 1)
            : Spring(response: row.spring.response, dampingFraction: row.spring.dampingFraction)
        motion.retarget(row.spring.target, spring: spring, at: now)
        return motion
    }

    static let settle = Spring(
        response: Rules.settleSpring.response, dampingFraction: Rules.settleSpring.dampingFraction)

    static func event(_ seq: UInt64, _ kind: String, _ movie: Movie) -> TuiEvent {
        var movie = movie
        movie.version = seq
        return .movie(CommittedEvent(seq: seq, kind: EventKind(kind), movie: movie, at: 0))
    }

    /// A front end greeted by a daemon at seq 7 and given the three movies, first one selected.
    static func listed(_ movies: [Movie] = movies, lines: Int = 24) -> TuiTestStore {
        var store = TuiTestStore(lines: lines)
        store.check(
            { $0.hello(writer: true, seq: 7, at: 0) },
            [
                .redraw, .send(.viewport(width: 400, direction: .ltr)), .send(.list),
            ]
        ) {
            $0.model.connection = .connected
        }
        store.check(
            { $0.replied(to: .list, .list(seq: 7, movies: movies), at: 0) },
            [
                .redraw, .send(.subscribe(from: 7)),
            ]
        ) {
            $0.entries = movies.map { TuiState.Entry(movie: $0) }
            $0.lastSeq = 7
            $0.model.seq = 7
            $0.model.selected = movies.isEmpty ? nil : 0
        }
        store.check({ $0.replied(to: .subscribe(from: 7), .closed([]), at: 0) }, [.redraw])
        return store
    }
}

extension InputEvent {
    static func char(_ c: Unicode.Scalar) -> InputEvent { .key(.character(c)) }
    static func press(_ column: Int, _ line: Int) -> InputEvent {
        .mouse(MouseEvent(.press(button: 0), column: column, line: line))
    }
    static func drag(_ column: Int, _ line: Int) -> InputEvent {
        .mouse(MouseEvent(.motion(button: 0), column: column, line: line))
    }
    static func release(_ column: Int, _ line: Int) -> InputEvent {
        .mouse(MouseEvent(.release(button: 0), column: column, line: line))
    }
}
