// swift-tools-version:6.0
// swiped: list rows with swipe actions, served by a daemon.
//
// Imports point one way: each module imports only modules above it in this list.
//   SwipeEngine    the gesture, pure
//   Movies         <- SwipeEngine
//   Metrics        the standard library only: counters, histograms, percentiles, the snapshot that
//                  `status` and `/metrics` render, the Prometheus text format; no I/O, no clock
//   CommandLineParsing  the standard library only: one way to read a command line (options,
//                  their values, positionals, `--`) that swiped, its data tools and swipectl share
//   People         the standard library only: roles, who a connection is, the people tables
//                  (tokens' hashes, the roles given to names), the throttles (issue 45), pure
//   Plumbing       <- CPlumbing (libc's eventfd, epoll and prctl, headers only): the process's
//                  plumbing, `Doorbell`, `SystemClock`, thread names, one epoll over two
//                  descriptors; no store's library, so neither store's SQL comes with it
//   LogTypes       the standard library and libc only: the log's values both stores share (an
//                  event to append and as stored, durability, the log's id), no storage
//   EventLog       <- CSQLite, LogTypes (re-exported), Plumbing, Metrics (the writer thread's
//                     CommitMeters), People (the people tables kept beside the events in the same file)
//   JSONCodec      the standard library and libc only: JSON values, parser, writer, framer
//   HTTPScrape     the standard library only: the HTTP/1.1 request heads of the metrics and web
//                  listeners, bounded, as state machines (bytes in, a decision out); the web
//                  page's static files (paths, types, ETags) as decisions, no file system
//   WebSocket      <- HTTPScrape, CCrypto: the web listener's pure parts (issue 43): the
//                  handshake (its SHA-1 and base64 from libcrypto), the Origin rules, a
//                  request's route, and RFC 6455 frames over buffers (issue 44), no sockets
//   Wire           <- JSONCodec, Movies, SwipeEngine, Metrics: protocol 1, its ops, requests, replies;
//                  recordings and their replay (Sources/Wire/Recordings: a folder, not a module)
//   StoreCore      <- Movies, People: the asynchronous boundary to a store (the `Store` protocol, its
//                     errors, reads and completions) and the command queue's decisions, pure
//   StoreSQLite    <- StoreCore, EventLog, LogTypes, Movies, CSQLite (its shim), Plumbing, Metrics:
//                     `SQLiteStore`
//   StorePostgres  <- StoreCore, LogTypes, Movies, CLibPQ, Plumbing, Metrics: `PostgresStore`, with
//                     no SQLite (neither EventLog nor CSQLite)
//   Session        <- Wire, JSONCodec, StoreCore, Movies, SwipeEngine, Metrics: one connection, pure
//   Daemon         <- Session, Wire, JSONCodec, StoreCore, StoreSQLite, StorePostgres, Movies,
//                     SwipeEngine, Metrics, HTTPScrape, WebSocket, CSystemd, Plumbing,
//                     CommandLineParsing: the I/O
//   SwipedClient   <- Wire, JSONCodec, Movies, SwipeEngine
//   DataTools      <- EventLog, Movies, JSONCodec, StoreCore, StoreSQLite, StorePostgres, CCrypto,
//                     CommandLineParsing:
//                     the subcommands backup, export, import and verify (issue 32)
//   Terminal       <- Movies, SwipeEngine: the terminal front end's pure parts (its state machine,
//                  input parser, layout, frame diff, text widths, springs), no I/O and no clock
//   swiped <- Daemon, DataTools, Wire; swipectl <- SwipedClient, Wire, JSONCodec, Movies, SwipeEngine,
//   Terminal, Metrics, CommandLineParsing; benchmarks and tests as declared below.
//   StoreTestSupport (Tests/StoreTestSupport) <- StoreCore, StorePostgres, EventLog, Movies,
//                  CSQLite, Plumbing: the in-memory store and the fault injection of both stores, linked
//                  only by tests and benchmarks, never by swiped or swipectl.
import PackageDescription

let strict: [SwiftSetting] = [
    .unsafeFlags(["-warnings-as-errors"], .when(configuration: .debug))
]

// The request path's modules drop Swift's run-time exclusivity checks in release builds: every
// access to a class's stored property (a connection's queue, its engine, the store's state)
// paid one, about 16 % of a drag's instructions (callgrind, BENCHMARKS.md). Debug builds, and
// so every test run and the sanitizer runs, keep the checks; the compile-time ones stay on.
// They are also compiled with cross-module optimization: since the request path runs through
// six modules (JSONCodec, Wire, Session, StoreCore, the store in use, Daemon), a call that one
// module used to inline became a call across a boundary (a drag's numbers, the state lent by the store); with it,
// ping, drag and toggle are back at or below their instructions of before the split
// (Benchmarks/instructions.sh, BENCHMARKS.md).
let hotPath: [SwiftSetting] =
    strict + [
        .unsafeFlags(
            ["-enforce-exclusivity=unchecked", "-cross-module-optimization"], .when(configuration: .release))
    ]

let package = Package(
    name: "swiped",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "swiped", targets: ["swiped"]),
        .executable(name: "swipectl", targets: ["swipectl"]),
        .library(name: "SwipeEngine", targets: ["SwipeEngine"]),
        .library(name: "SwipedClient", targets: ["SwipedClient"]),
    ],
    targets: [
        // C libraries from Debian, as module maps only.
        .systemLibrary(
            name: "CSystemd", pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CLibPQ", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),
        .systemLibrary(
            name: "CCrypto", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        // libc's eventfd, epoll and prctl, which Swift cannot call: headers only, nothing to link.
        .systemLibrary(name: "CPlumbing"),

        // Pure cores.
        .target(name: "SwipeEngine", swiftSettings: strict),
        .target(name: "Movies", dependencies: ["SwipeEngine"], swiftSettings: strict),
        .target(name: "Plumbing", dependencies: ["CPlumbing"], swiftSettings: strict),
        .target(name: "LogTypes", swiftSettings: strict),
        .target(name: "CommandLineParsing", swiftSettings: strict),
        .target(
            name: "EventLog", dependencies: ["CSQLite", "LogTypes", "Plumbing", "Metrics", "People"],
            swiftSettings: strict),
        .target(name: "JSONCodec", swiftSettings: hotPath),
        .target(name: "Metrics", swiftSettings: hotPath),
        .target(name: "HTTPScrape", swiftSettings: strict),
        .target(
            name: "WebSocket", dependencies: ["HTTPScrape", "CCrypto"], swiftSettings: hotPath),
        .target(name: "People", swiftSettings: strict),
        .target(
            name: "Wire", dependencies: ["JSONCodec", "SwipeEngine", "Movies", "Metrics", "People"],
            swiftSettings: hotPath),
        .target(name: "StoreCore", dependencies: ["Movies", "People"], swiftSettings: hotPath),
        .target(
            name: "Session",
            dependencies: ["JSONCodec", "SwipeEngine", "Movies", "Wire", "StoreCore", "Metrics", "People"],
            swiftSettings: hotPath),

        // I/O.
        .target(
            name: "StoreSQLite",
            dependencies: [
                "StoreCore", "Movies", "EventLog", "LogTypes", "CSQLite", "Plumbing", "Metrics", "People",
            ],
            swiftSettings: hotPath),
        .target(
            name: "StorePostgres",
            dependencies: ["StoreCore", "Movies", "LogTypes", "CLibPQ", "Plumbing", "Metrics", "People"],
            swiftSettings: hotPath),
        .target(
            name: "Daemon",
            dependencies: [
                "SwipeEngine", "Movies", "StoreCore", "StoreSQLite", "StorePostgres", "Session",
                "JSONCodec", "Wire", "CSystemd", "Metrics", "HTTPScrape", "WebSocket", "People", "CCrypto",
                "Plumbing", "CommandLineParsing",
            ],
            swiftSettings: hotPath),
        .target(
            name: "SwipedClient", dependencies: ["JSONCodec", "Wire", "Movies", "SwipeEngine"],
            swiftSettings: strict),
        // swiped backup|export|import|verify (issue 32).
        .target(
            name: "DataTools",
            dependencies: [
                "EventLog", "Movies", "JSONCodec", "StoreCore", "StoreSQLite", "StorePostgres", "CCrypto",
                "People", "CommandLineParsing",
            ],
            swiftSettings: strict),

        // Thin executables.
        .executableTarget(
            name: "swiped", dependencies: ["Daemon", "DataTools", "Wire"], swiftSettings: strict),
        .executableTarget(
            name: "swipectl",
            dependencies: [
                "SwipedClient", "JSONCodec", "Wire", "Movies", "SwipeEngine", "Terminal", "Metrics", "People",
                "CommandLineParsing",
            ],
            swiftSettings: strict),

        // Benchmarks and test helpers (release builds print figures; see BENCHMARKS.md).
        .executableTarget(
            name: "engine-bench", dependencies: ["SwipeEngine", "Movies"],
            path: "Benchmarks/engine-bench", swiftSettings: strict),
        .executableTarget(
            name: "log-bench", dependencies: ["EventLog", "Movies", "StoreTestSupport"],
            path: "Benchmarks/log-bench", swiftSettings: strict),
        .executableTarget(
            name: "reorder-bench", dependencies: ["Movies"], path: "Benchmarks/reorder-bench",
            swiftSettings: strict),
        .executableTarget(
            name: "loadgen", dependencies: ["EventLog", "Movies", "CSystemd"],
            path: "Benchmarks/loadgen", swiftSettings: strict),
        .executableTarget(
            name: "wire-bench", dependencies: ["JSONCodec", "Wire"],
            path: "Benchmarks/wire-bench", swiftSettings: strict),
        .executableTarget(
            name: "log-torture", dependencies: ["EventLog", "Movies"],
            path: "Tests/Support/log-torture", swiftSettings: strict),
        // alloc-guard (make test, release build): fails when the drag path allocates. CAllocCounter
        // replaces malloc and its family in the executable that links it (AllocCounter.c says
        // how): only alloc-guard may depend on it.
        .target(
            name: "CAllocCounter", path: "Tests/Support/AllocCounter",
            cSettings: [
                .unsafeFlags(["-Wall", "-Wextra"]),
                .unsafeFlags(["-Werror"], .when(configuration: .debug)),
            ]),
        .executableTarget(
            name: "alloc-guard",
            dependencies: [
                "CAllocCounter", "JSONCodec", "Session", "Wire", "SwipeEngine", "Movies", "People",
                "WebSocket",
            ],
            path: "Tests/Support/alloc-guard", swiftSettings: strict),

        // Tests mirror the library targets one to one; IntegrationTests run the real binaries.
        // TestSupport: what several test targets share (a seeded random generator, a metrics sample).
        // StoreTestSupport: the in-memory store, SQLite's fault VFS and PostgreSQL's commit
        // faults (the seam PGCommitPath), for tests and log-bench only.
        .target(
            name: "TestSupport", dependencies: ["Metrics"], path: "Tests/TestSupport", swiftSettings: strict),
        .target(
            name: "StoreTestSupport",
            dependencies: [
                "StoreCore", "StorePostgres", "EventLog", "Movies", "CSQLite", "People", "Plumbing",
            ],
            path: "Tests/StoreTestSupport", swiftSettings: strict),
        .testTarget(
            name: "SwipeEngineTests", dependencies: ["SwipeEngine", "Movies", "TestSupport"],
            resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(name: "MoviesTests", dependencies: ["Movies", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "PeopleTests", dependencies: ["People"], swiftSettings: strict),
        .testTarget(
            name: "CommandLineParsingTests", dependencies: ["CommandLineParsing"], swiftSettings: strict),
        .testTarget(
            name: "EventLogTests", dependencies: ["EventLog", "Movies", "TestSupport", "StoreTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "JSONCodecTests", dependencies: ["JSONCodec", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "MetricsTests", dependencies: ["Metrics", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "HTTPScrapeTests", dependencies: ["HTTPScrape"], swiftSettings: strict),
        .testTarget(
            name: "WebSocketTests", dependencies: ["WebSocket", "HTTPScrape"], swiftSettings: strict
        ),
        .testTarget(
            name: "WireTests",
            dependencies: ["Wire", "JSONCodec", "Movies", "SwipeEngine", "Metrics", "TestSupport"],
            swiftSettings: strict),
        // StoreTests is one target for StoreCore, StoreSQLite and StorePostgres, not one each: the
        // contract suite (StoreContractTests) runs every test against every store, so it links
        // them all, and what each store does beyond the contract sits beside it.
        .testTarget(
            name: "StoreTests",
            dependencies: [
                "StoreCore", "StoreSQLite", "StorePostgres", "StoreTestSupport", "EventLog", "Movies",
                "Metrics", "TestSupport", "People",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "SessionTests",
            dependencies: [
                "JSONCodec", "Session", "StoreCore", "StoreTestSupport", "Movies", "SwipeEngine", "Wire",
                "TestSupport", "People",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "DaemonTests",
            dependencies: [
                "Daemon", "HTTPScrape", "Metrics", "Session", "Wire", "People", "Movies", "StoreCore",
                "StoreTestSupport",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "SwipedClientTests", dependencies: ["SwipedClient", "JSONCodec", "Movies", "SwipeEngine"],
            swiftSettings: strict),
        .testTarget(
            name: "DataToolsTests",
            dependencies: [
                "DataTools", "EventLog", "Movies", "TestSupport", "StorePostgres", "StoreTestSupport",
            ],
            resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(name: "swipectlTests", dependencies: ["swipectl"], swiftSettings: strict),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["SwipedClient", "JSONCodec", "Wire", "TestSupport", "Movies"],
            swiftSettings: strict),
        // The terminal front end (issue 15): its pure parts, their tests, and the pty benchmark.
        .target(name: "Terminal", dependencies: ["Movies", "SwipeEngine"], swiftSettings: strict),
        .testTarget(
            name: "TerminalTests", dependencies: ["Terminal", "Movies", "SwipeEngine", "TestSupport"],
            swiftSettings: strict),
        .executableTarget(name: "tui-bench", path: "Benchmarks/tui-bench", swiftSettings: strict),
    ]
)
