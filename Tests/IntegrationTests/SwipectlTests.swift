// swipectl, the real binary, against a real swiped: every command, its --json output, MOVIE
// resolution, `watch` and its interrupt, every exit status and its message.

import Foundation
import Glibc
import XCTest

final class SwipectlTests: DaemonTestCase {
    // MARK: Running swipectl

    /// Runs swipectl on this test's daemon (`--socket` first) and returns what it did.
    @discardableResult
    private func swipectl(
        _ arguments: String..., socket: Bool = true, environment: [String: String?] = [:],
        workingDirectory: String? = nil
    ) throws -> Subprocess.Result {
        try Subprocess.run(
            try Binaries.swipectl, (socket ? ["--socket", daemon.socket] : []) + arguments,
            environment: (["SWIPED_SOCKET": nil] as [String: String?]).merging(environment) { $1 },
            workingDirectory: workingDirectory,
            timeout: .seconds(20))
    }

    /// Like `swipectl`, but fails the test unless it exits 0 with nothing on stderr.
    @discardableResult
    private func ok(_ arguments: String..., file: StaticString = #filePath, line: UInt = #line) throws
        -> String
    {
        let result = try Subprocess.run(
            try Binaries.swipectl, ["--socket", daemon.socket] + arguments,
            environment: ["SWIPED_SOCKET": nil],
            timeout: .seconds(20))
        XCTAssertEqual(
            result.status, .exited(0), "swipectl \(arguments): \(result.standardError)", file: file,
            line: line)
        XCTAssertEqual(result.standardError, "", file: file, line: line)
        return result.standardOutput
    }

    private func json(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String:
        Any]
    {
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try XCTUnwrap(value as? [String: Any], "not a JSON object: \(text)", file: file, line: line)
    }

    /// The daemon's movies, by id, from `--json list`.
    private func movies() throws -> [String: [String: Any]] {
        let reply = try json(try ok("--json", "list"))
        let list = try XCTUnwrap(reply["movies"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: list.map { ($0["id"] as! String, $0) })
    }

    /// The row of `id` in `list`'s table.
    private func tableRow(_ table: String, _ id: String) -> String? {
        table.split(separator: "\n").map(String.init).first { $0.hasPrefix(id + " ") || $0 == id }
    }

    // MARK: list

    func testListShowsIDTitleAndTheSeedsIndicators() throws {
        try ok("toggle-watched", "matrix")
        try ok("toggle-friends", "godfather")
        try ok("toggle-watched", "godfather")
        let table = try ok("list")
        let lines = table.split(separator: "\n").map(String.init)
        XCTAssertEqual(
            lines.first?.split(separator: " ", omittingEmptySubsequences: true), ["ID", "TITLE", "WATCHED"])
        XCTAssertEqual(lines.count, 11, table)  // header and the ten seed movies, no legend (not a tty)
        let matrix = try XCTUnwrap(tableRow(table, "matrix"), table)
        XCTAssertTrue(matrix.contains("The Matrix") && matrix.hasSuffix("👁") && !matrix.contains("👥"), matrix)
        let godfather = try XCTUnwrap(tableRow(table, "godfather"), table)
        XCTAssertTrue(godfather.contains("The Godfather  ") && godfather.hasSuffix("  👁 👥"), godfather)
        XCTAssertTrue(try XCTUnwrap(tableRow(table, "seven")).hasSuffix("Se7en"), table)
        // The title column is aligned: every title starts at the same offset.
        let offset = try XCTUnwrap(lines[0].range(of: "TITLE")).lowerBound.utf16Offset(in: lines[0])
        for line in lines.dropFirst() {
            XCTAssertNotEqual(line[line.index(line.startIndex, offsetBy: offset)], " ", line)
            XCTAssertEqual(line[line.index(line.startIndex, offsetBy: offset - 1)], " ", line)
        }
    }

    func testListJSONIsTheDaemonsReply() throws {
        let output = try ok("--json", "list")
        XCTAssertTrue(output.hasSuffix("}\n") && output.filter { $0 == "\n" }.count == 1, output)
        let reply = try json(output)
        XCTAssertEqual(reply["ok"] as? Bool, true)
        XCTAssertEqual(reply["seq"] as? Int, 10)
        let list = try XCTUnwrap(reply["movies"] as? [[String: Any]])
        XCTAssertEqual(list.first?["id"] as? String, "godfather")
        XCTAssertEqual(list.count, 10)
        // --json may also come after the command, as with systemctl.
        XCTAssertEqual(try ok("list", "--json"), output)
    }

    // MARK: add, toggles, remove

    func testAddWithAndWithoutImage() throws {
        XCTAssertEqual(
            try ok("add", "Blade Runner", "--image", "replicant"),
            "Added blade_runner \"Blade Runner\" (seq 11).\n")
        let reply = try json(try ok("--json", "add", "--image=tears", "Blade Runner"))
        XCTAssertEqual(reply["ok"] as? Bool, true)
        XCTAssertEqual(reply["seq"] as? Int, 12)
        let movie = try XCTUnwrap(reply["movie"] as? [String: Any])
        XCTAssertEqual(movie["id"] as? String, "blade_runner_2")
        XCTAssertEqual(movie["image"] as? String, "tears")
        XCTAssertEqual(try movies()["blade_runner"]?["image"] as? String, "replicant")
        // A title that starts with '-' comes after `--`.
        XCTAssertTrue(try ok("add", "--", "-1 Minute").contains("\"-1 Minute\""))
    }

    func testTogglesAndRemoveTakeAnIDOrATitlePrefix() throws {
        XCTAssertEqual(try ok("toggle-watched", "matrix"), "matrix \"The Matrix\": watched 👁 (seq 11).\n")
        XCTAssertEqual(try ok("toggle-watched", "THE MAT"), "matrix \"The Matrix\": not watched (seq 12).\n")
        XCTAssertEqual(try ok("toggle-friends", "se7"), "seven \"Se7en\": watched with friends 👥 (seq 13).\n")
        XCTAssertEqual(try ok("remove", "forrest"), "Removed forrest_gump \"Forrest Gump\" (seq 14).\n")
        var state = try movies()
        XCTAssertNil(state["forrest_gump"])
        XCTAssertEqual(state["matrix"]?["watched"] as? Bool, false)
        XCTAssertEqual(state["seven"]?["watchedWithFriends"] as? Bool, true)

        // --json prints the mutation's reply (not the list used to resolve the title).
        let reply = try json(try ok("--json", "toggle-watched", "pulp"))
        XCTAssertEqual((reply["movie"] as? [String: Any])?["id"] as? String, "pulp_fiction")
        XCTAssertEqual(reply["seq"] as? Int, 15)

        // An exact title wins over the longer titles it starts.
        try ok("add", "The Matrix Reloaded")
        XCTAssertTrue(try ok("toggle-friends", "the matrix").hasPrefix("matrix \"The Matrix\""))
        state = try movies()
        XCTAssertEqual(state["matrix"]?["watchedWithFriends"] as? Bool, true)
        XCTAssertEqual(state["the_matrix_reloaded"]?["watchedWithFriends"] as? Bool, false)
    }

    /// `swipectl undo SEQ` (issue 49): each call is a connection of its own, so it names the
    /// change; it says what the undo did and whose change it was (issue 46: root's here, the
    /// seed's nobody's), and refuses a movie changed since.
    func testUndoASeqSaysWhatItDid() throws {
        _ = try daemon.ok("remove", "seven")  // 11
        XCTAssertEqual(
            try daemon.ok("undo", "11"), "Undid seq 11 (by root): seven \"Se7en\" restored (seq 12).\n")
        _ = try daemon.ok("toggle-watched", "matrix")  // 13: watched
        _ = try daemon.ok("toggle-watched", "matrix")  // 14: unwatched
        let changed = try daemon.swipectl(["undo", "13"])
        XCTAssertEqual(changed.status, .exited(1))
        XCTAssertTrue(
            changed.standardError.contains("changed-since")
                || changed.standardError.contains("changed by someone else"), changed.standardError)
        XCTAssertEqual(
            try daemon.ok("undo", "14"), "Undid seq 14 (by root): matrix \"The Matrix\" watched (seq 15).\n")
        let redo = try daemon.swipectl(["undo", "15"])
        XCTAssertEqual(redo.status, .exited(1))
        XCTAssertTrue(redo.standardError.contains("there is no redo"), redo.standardError)
        let usage = try daemon.swipectl(["undo", "x"])
        XCTAssertEqual(usage.status, .exited(2), usage.standardError)
        XCTAssertEqual(
            try daemon.ok("--json", "history", "--from", "15"), #"{"ok":true,"seq":15,"events":[]}"# + "\n")
        // The seed's events say nobody: an undo of one says no name.
        XCTAssertEqual(
            try daemon.ok("undo", "10"), "Undid seq 10: the_green_mile \"The Green Mile\" removed (seq 16).\n"
        )
    }

    func testAnAmbiguousTitleListsTheCandidatesAndChangesNothing() throws {
        let result = try swipectl("toggle-watched", "the")
        XCTAssertEqual(result.status, .exited(1))
        XCTAssertEqual(result.standardOutput, "")
        let message = result.standardError
        XCTAssertTrue(message.hasPrefix("swipectl: 'the' matches 5 titles"), message)
        for id in ["godfather", "dark_knight", "matrix", "silence_of_lambs", "the_green_mile"] {
            XCTAssertTrue(message.contains("  \(id) "), "\(id) missing from:\n\(message)")
        }
        XCTAssertFalse(message.contains("seven"), message)
        XCTAssertEqual(try json(try ok("--json", "history"))["seq"] as? Int, 10, "nothing was written")
    }

    func testAnUnknownMovieIsTheDaemonsNotFound() throws {
        let result = try swipectl("remove", "alien")
        XCTAssertEqual(result.status, .exited(1))
        XCTAssertEqual(result.standardOutput, "")
        XCTAssertEqual(
            result.standardError,
            "swipectl: not-found: no movie with id \"alien\"\n"
                + "swipectl: no title starts with 'alien' either (see `swipectl list`)\n")
        // A removed movie's id is not-found too, also with --json (which prints the reply).
        try ok("remove", "seven")
        let again = try swipectl("--json", "toggle-watched", "seven")
        XCTAssertEqual(again.status, .exited(1))
        XCTAssertEqual(try json(again.standardOutput)["ok"] as? Bool, false)
        XCTAssertTrue(again.standardError.hasPrefix("swipectl: not-found: "), again.standardError)
    }

    /// A command on a removed movie says how to bring it back, and that command does.
    func testACommandOnARemovedMovieSaysHowToRestoreIt() throws {
        try ok("remove", "seven")
        let expected =
            "swipectl: not-found: movie \"seven\" was removed at seq 11\n"
            + "swipectl: bring it back with `swipectl restore seven`\n"
        for result in [
            try swipectl("toggle-watched", "seven"), try swipectl("remove", "seven"),
            try swipectl("swipe", "seven", "--dx", "-50"),
        ] {
            XCTAssertEqual(result.status, .exited(1))
            XCTAssertEqual(result.standardError, expected)
        }
        XCTAssertEqual(try ok("restore", "seven"), "Restored seven \"Se7en\" (seq 12).\n")
        // An id the daemon never had is not told to be restored.
        XCTAssertFalse(try swipectl("toggle-watched", "alien").standardError.contains("restore"))
    }

    func testRestoreBringsARemovedMovieBackByItsID() throws {
        XCTAssertEqual(try ok("remove", "se7"), "Removed seven \"Se7en\" (seq 11).\n")
        XCTAssertEqual(try ok("restore", "seven"), "Restored seven \"Se7en\" (seq 12).\n")
        XCTAssertEqual(try movies()["seven"]?["version"] as? Int, 12)
        let again = try swipectl("restore", "seven")
        XCTAssertEqual(again.status, .exited(1))
        XCTAssertEqual(again.standardError, "swipectl: conflict: movie \"seven\" is not removed\n")
        XCTAssertTrue(try ok("history", "--from", "11").contains("restored  seven  Se7en"))
    }

    // MARK: watch

    func testWatchPrintsChangesByAnotherClientAndExitsZeroOnSIGINT() throws {
        let watch = try Subprocess(
            try Binaries.swipectl, ["--socket", daemon.socket, "watch"], environment: ["SWIPED_SOCKET": nil])
        try watch.waitForOutput("watching \(daemon.socket) from seq 10", in: .standardError)
        try ok("toggle-watched", "matrix")
        try ok("remove", "inception")
        try ok("toggle-friends", "godfather")
        try watch.waitForOutput("godfather")
        watch.kill(SIGINT)
        XCTAssertEqual(try watch.wait(timeout: .seconds(5)), .exited(0), watch.standardError)
        let lines = watch.standardOutput.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, watch.standardOutput)  // no header: not a terminal
        XCTAssertEqual(lines.map { String($0.prefix { $0 != " " }) }, ["11", "12", "13"])
        // The time in between, to the second.
        XCTAssertNotNil(
            lines[0].range(of: #"^11 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  "#, options: .regularExpression),
            lines[0])
        // Aligned columns: who, the change, the id and the title start at the same offset on
        // every line, whatever the lengths of the cells before them.
        let rows = [
            ("watched", "matrix", "The Matrix"), ("removed", "inception", "Inception"),
            ("watched with friends", "godfather", "The Godfather"),
        ]
        var starts: [[Int]] = []
        for (line, (change, id, title)) in zip(lines, rows) {
            XCTAssertTrue(line.hasSuffix("  " + title), line)
            let by = try XCTUnwrap(line.range(of: "Z  root "), line)
            let change = try XCTUnwrap(line.range(of: "  " + change + " "), line)
            let id = try XCTUnwrap(line.range(of: "  " + id + "  "), line)
            starts.append([
                by.lowerBound.utf16Offset(in: line), change.lowerBound.utf16Offset(in: line),
                id.lowerBound.utf16Offset(in: line),
                line.utf16.count - title.utf16.count,
            ])
        }
        XCTAssertEqual(Set(starts).count, 1, watch.standardOutput)
    }

    func testWatchJSONPrintsTheRawEventsFromSEQAndStopsOnSIGTERM() throws {
        try ok("toggle-friends", "godfather")  // seq 11, before the watch: caught up with --from
        let watch = try Subprocess(
            try Binaries.swipectl, ["--socket", daemon.socket, "--json", "watch", "--from", "10"],
            environment: ["SWIPED_SOCKET": nil])
        try watch.waitForOutput("\"seq\":11")
        try ok("add", "Heat")
        try watch.waitForOutput("\"seq\":12")
        watch.kill(SIGTERM)
        XCTAssertEqual(try watch.wait(timeout: .seconds(5)), .exited(0), watch.standardError)
        let events = try watch.standardOutput.split(separator: "\n").map { try json(String($0)) }
        XCTAssertEqual(events.map { $0["event"] as? String }, ["movie", "movie"])
        XCTAssertEqual(events.map { $0["kind"] as? String }, ["watched-with-friends-toggled", "added"])
        XCTAssertEqual((events[1]["movie"] as? [String: Any])?["title"] as? String, "Heat")
    }

    func testWatchOnceEndsWithStatus3WhenTheDaemonStops() throws {
        let watch = try Subprocess(
            try Binaries.swipectl, ["--socket", daemon.socket, "watch", "--once"],
            environment: ["SWIPED_SOCKET": nil])
        try watch.waitForOutput("watching", in: .standardError)
        XCTAssertEqual(try daemon.stop(), .exited(0))
        XCTAssertEqual(try watch.wait(timeout: .seconds(5)), .exited(3))
        XCTAssertTrue(watch.standardError.contains("ended the session: shutdown"), watch.standardError)
        daemon = try TestDaemon(restarting: daemon)  // for tearDown
    }

    // MARK: history, call, help

    func testHistoryTableAndJSON() throws {
        try ok("toggle-watched", "seven")
        let table = try ok("history", "--from", "8", "--limit", "2")
        let lines = table.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, table)
        XCTAssertEqual(
            lines[0].split(separator: " ", omittingEmptySubsequences: true),
            ["SEQ", "TIME", "BY", "CHANGE", "ID", "TITLE"])
        // The seed's events say nobody: a dash, a word still for awk.
        XCTAssertTrue(
            lines[1].hasPrefix("9 ") && lines[1].contains("Z  -   added ")
                && lines[1].hasSuffix("Saving Private Ryan"), lines[1])
        XCTAssertTrue(lines[2].hasPrefix("10 ") && lines[2].hasSuffix("The Green Mile"), lines[2])

        let reply = try json(try ok("--json", "history", "--from=10"))
        XCTAssertEqual(reply["seq"] as? Int, 11)
        let events = try XCTUnwrap(reply["events"] as? [[String: Any]])
        XCTAssertEqual(events.map { $0["kind"] as? String }, ["watched-toggled"])
        XCTAssertTrue(try ok("history").contains("  root  watched  seven  "))

        // swipectl checks the range the op table declares (1 to 1000) before it asks.
        let zero = try swipectl("history", "--limit", "0")
        XCTAssertEqual(zero.status, .exited(2))
        XCTAssertEqual(
            zero.standardError,
            "swipectl: --limit must be a whole number from 1 to 1000, not '0'\nTry 'swipectl --help'.\n")
        XCTAssertEqual(try json(try ok("--json", "history", "--limit", "1000"))["seq"] as? Int, 11)
    }

    func testCallSendsOneRawLineAndPrintsTheRawReply() throws {
        XCTAssertEqual(try ok("call", #"{"op":"ping","id":[1,"x"]}"#), #"{"id":[1,"x"],"ok":true}"# + "\n")
        let list = try json(try ok("call", #"{"op":"list"}"#))
        XCTAssertEqual((list["movies"] as? [Any])?.count, 10)

        let unknown = try swipectl("call", #"{"op":"fly","id":3}"#)
        XCTAssertEqual(unknown.status, .exited(1))
        let reply = try json(unknown.standardOutput)
        XCTAssertEqual(reply["id"] as? Int, 3)
        XCTAssertEqual((reply["error"] as? [String: Any])?["code"] as? String, "unknown-op")
        XCTAssertTrue(
            unknown.standardError.hasPrefix("swipectl: unknown-op: unknown op \"fly\""), unknown.standardError
        )

        let broken = try swipectl("call", #"{"op":"list",}"#)
        XCTAssertEqual(broken.status, .exited(1))
        XCTAssertEqual(try json(broken.standardOutput)["ok"] as? Bool, false)
        XCTAssertEqual(broken.standardError, "swipectl: bad-json: trailing comma at byte 12\n")

        // A mutation through call is a real one.
        try ok("call", #"{"op":"toggle-watched","movie":"matrix"}"#)
        XCTAssertEqual(try movies()["matrix"]?["watched"] as? Bool, true)
    }

    func testHelpFormatsTheDaemonsOps() throws {
        let text = try ok("help")
        XCTAssertTrue(text.hasPrefix("swiped/0.1.0 at \(daemon.socket), protocol 1"), text)
        for heading in ["The connection:", "The shared movie list:", "This connection's swipe engine:"] {
            XCTAssertTrue(text.contains("\n\(heading)\n"), heading)
        }
        let add = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("  add ") })
        XCTAssertTrue(
            add.hasSuffix("adds a movie at the end of the list (changes the movies; needs the role writer)"),
            String(add))
        // The role an op needs, from the op table, when a reader's is not enough.
        let tokens = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("  token-list ") })
        XCTAssertTrue(tokens.hasSuffix("(needs the role admin)"), String(tokens))
        let ping = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("  ping ") })
        XCTAssertFalse(ping.contains("needs the role"), String(ping))
        XCTAssertNotNil(
            text.range(of: #"\n +title +string +required +1 to 200 characters"#, options: .regularExpression),
            text)

        let reply = try json(try ok("--json", "help"))
        let ops = try XCTUnwrap(reply["ops"] as? [[String: Any]]).compactMap { $0["op"] as? String }
        XCTAssertTrue(ops.contains("toggle-watched-with-friends") && ops.contains("subscribe"), "\(ops)")
        for op in ops { XCTAssertTrue(text.contains("\n  \(op) "), "\(op) missing from help") }

        // Ranges and defaults from the daemon's table, the action object's fields, then the
        // error codes and the events.
        for pattern in [
            #"\n +limit +integer +optional +.*\[1 to 1000; default 100\]\n"#,
            #"\n +width +number +optional +.*\[100 to 4000; default 390\]\n"#,
            #"\n +direction +string +optional +.*\[ltr or rtl; default "ltr"\]\n"#,
            #"\n +key +string +optional +.*\[1 to 128 bytes\]\n"#,
            #"\n +each action: action \(required; 1 to 200 bytes\), .*role \(destructive\)"#,
        ] {
            XCTAssertNotNil(text.range(of: pattern, options: .regularExpression), pattern)
        }
        let errors = try XCTUnwrap(text.range(of: "\nErrors (\"code\" of a failed reply):\n"), text)
        let codes = try XCTUnwrap(reply["errors"] as? [[String: Any]]).compactMap { $0["code"] as? String }
        XCTAssertEqual(codes.count, 12)
        let listed = text.index(before: errors.upperBound)..<text.endIndex
        for code in codes { XCTAssertNotNil(text.range(of: "\n  \(code) ", range: listed), code) }
        XCTAssertTrue(
            text.contains(
                "\n  bye (too-many-clients, slow-consumer, shutdown, revoked), to one connection: "), text)
    }

    // MARK: Own options and exit statuses

    func testHelpAndVersionNeedNoDaemon() throws {
        let help = try swipectl("--help", socket: false)
        XCTAssertEqual(help.status, .exited(0))
        XCTAssertTrue(
            help.standardOutput.hasPrefix(
                "Usage: swipectl [--socket PATH] [--json] [--token-file FILE] COMMAND"),
            help.standardOutput)
        for command in [
            "list", "add TITLE", "toggle-watched MOVIE", "toggle-friends MOVIE", "remove MOVIE",
            "restore MOVIE", "watch",
            "history", "swipe MOVIE --dx POINTS", "swipe MOVIE --open", "call JSON", "help", "Exit status",
            "token create NAME --role reader|writer|admin [--expires DURATION]", "token list",
            "token revoke NAME [--id TOKENID]", "role NAME [none|reader|writer|admin]", "role NAME --clear",
            "denials", "whoami", "--token-file FILE", "--token TOKEN", "$SWIPED_TOKEN",
        ] {
            XCTAssertTrue(help.standardOutput.contains(command), command)
        }
        XCTAssertEqual(try swipectl("list", "-h", socket: false).standardOutput, help.standardOutput)
        let version = try swipectl("--version", socket: false)
        XCTAssertEqual(version.status, .exited(0))
        XCTAssertEqual(version.standardOutput, "swipectl 0.1.0 (protocol 1)\n")
    }

    func testUsageErrorsExit2() throws {
        let cases: [([String], String)] = [
            ([], "no command given"),
            (["frob"], "unknown command 'frob'"),
            (["--frob", "list"], "unknown option '--frob'"),
            (["add"], "'add' takes TITLE, not 0 arguments"),
            (["toggle-watched", "the", "matrix"], "(quote a title with spaces)"),
            (["list", "extra"], "'list' takes no arguments, not 1 argument"),
            (["remove", ""], "MOVIE must not be empty"),
            (["list", "--image", "x"], "--image does not apply to 'list'"),
            (["history", "--from", "-1"], "--from must be a whole number ≥ 0, not '-1'"),
            (["history", "--limit"], "--limit needs a value"),
            (["history", "--limit", "0"], "--limit must be a whole number from 1 to 1000, not '0'"),
            (["history", "--limit", "1001"], "--limit must be a whole number from 1 to 1000, not '1001'"),
            (["watch", "--from", "x"], "--from must be a whole number ≥ 0, not 'x'"),
            (["swipe", "matrix", "--dx", "2e9"], "--dx must be from -1000000000 to 1000000000, not '2e9'"),
            (
                ["swipe", "matrix", "--dx", "-9", "--vx", "-2e9"],
                "--vx must be from -1000000000 to 1000000000"
            ),
            (["--socket"], "--socket needs a value"),
            (["--json=yes", "list"], "--json takes no value"),
            (["call", "{\"op\":\"ping\"}\n{\"op\":\"ping\"}"], "JSON must be one line"),
        ]
        for (arguments, message) in cases {
            // No --socket: usage errors are found before any connection.
            let result = try Subprocess.run(
                try Binaries.swipectl, arguments, environment: ["SWIPED_SOCKET": "/nonexistent"])
            XCTAssertEqual(result.status, .exited(2), "\(arguments)")
            XCTAssertEqual(result.standardOutput, "", "\(arguments)")
            XCTAssertTrue(result.standardError.hasPrefix("swipectl: "), result.standardError)
            XCTAssertTrue(result.standardError.contains(message), "\(arguments): \(result.standardError)")
            XCTAssertTrue(result.standardError.hasSuffix("\nTry 'swipectl --help'.\n"), result.standardError)
        }
    }

    func testCannotConnectExits3NamingTheSocketAndWhy() throws {
        let missing = daemon.directory.file("nope.sock")
        let result = try swipectl("--socket", missing, "list", socket: false)
        XCTAssertEqual(result.status, .exited(3))
        XCTAssertEqual(result.standardOutput, "")
        XCTAssertTrue(
            result.standardError.hasPrefix(
                "swipectl: cannot connect to \(missing): No such file or directory\n"), result.standardError)
        XCTAssertTrue(
            result.standardError.contains("Tried \(missing) because --socket says so."), result.standardError)
        XCTAssertTrue(result.standardError.contains("Is swiped running?"), result.standardError)

        // A socket file nobody listens on.
        let dead = daemon.directory.file("dead.sock")
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = try unixAddress(dead)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        close(fd)
        let refused = try swipectl("list", socket: false, environment: ["SWIPED_SOCKET": dead])
        XCTAssertEqual(refused.status, .exited(3))
        XCTAssertTrue(
            refused.standardError.contains("cannot connect to \(dead): Connection refused"),
            refused.standardError)
        XCTAssertTrue(refused.standardError.contains("because $SWIPED_SOCKET says so"), refused.standardError)
    }

    func testTheDefaultSocket() throws {
        // $SWIPED_SOCKET.
        XCTAssertEqual(
            try swipectl("list", socket: false, environment: ["SWIPED_SOCKET": daemon.socket]).status,
            .exited(0))
        // $XDG_RUNTIME_DIR/swiped.sock when it exists.
        let runtime = try TemporaryDirectory("swipectl-xdg")
        XCTAssertEqual(symlink(daemon.socket, runtime.file("swiped.sock")), 0)
        let viaXDG = try swipectl("list", socket: false, environment: ["XDG_RUNTIME_DIR": runtime.path])
        XCTAssertEqual(viaXDG.status, .exited(0), viaXDG.standardError)
        // Else ./swiped.sock (when /run/swiped/swiped.sock does not exist either), and the
        // message says why that one.
        unlink(runtime.file("swiped.sock"))
        try XCTSkipIf(access("/run/swiped/swiped.sock", F_OK) == 0, "this machine runs swiped.socket")
        let fallback = try swipectl(
            "list", socket: false, environment: ["XDG_RUNTIME_DIR": runtime.path],
            workingDirectory: runtime.path)
        XCTAssertEqual(fallback.status, .exited(3))
        XCTAssertTrue(
            fallback.standardError.contains(
                "Tried ./swiped.sock because there is no --socket, no $SWIPED_SOCKET, and no "
                    + "\(runtime.path)/swiped.sock or /run/swiped/swiped.sock."), fallback.standardError)
        XCTAssertEqual(symlink(daemon.socket, runtime.file("swiped.sock")), 0)
        let here = try swipectl(
            "list", socket: false, environment: ["XDG_RUNTIME_DIR": nil], workingDirectory: runtime.path)
        XCTAssertEqual(here.status, .exited(0), here.standardError)
    }

    func testAReadOnlyPeerGetsForbiddenWithStatus1() throws {
        // --writers with a group root is not in would still let root write; run the daemon
        // for a group nobody has and connect as a non-root user, when the test can.
        guard getuid() == 0, Binaries.hasSystem("setpriv") else { throw XCTSkip("needs root and setpriv") }
        let readOnly = try TestDaemon(extraArguments: ["--writers", "root"])
        defer { _ = try? readOnly.stop() }
        try readOnly.directory.allowOthers()
        chmod(readOnly.socket, 0o666)
        let result = try Subprocess.run(
            "setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", try Binaries.swipectl,
                "--socket", readOnly.socket, "toggle-watched", "matrix",
            ],
            environment: ["SWIPED_SOCKET": nil])
        XCTAssertEqual(result.status, .exited(1), result.standardError)
        XCTAssertTrue(result.standardError.hasPrefix("swipectl: forbidden: "), result.standardError)
    }
}

/// swiped on a temporary directory: `swiped --socket tmp/s.sock --state tmp/state`, started and
/// waited for (the socket accepts), stopped with SIGTERM and reaped.
final class TestDaemon {
    let directory: TemporaryDirectory
    let process: Subprocess
    var socket: String { directory.file("s.sock") }

    init(extraArguments: [String] = []) throws {
        directory = try TemporaryDirectory("swipectl")
        process = try TestDaemon.start(directory, extraArguments)
    }

    /// A new daemon on the same directory (and state) as a stopped one.
    init(restarting stopped: TestDaemon) throws {
        directory = stopped.directory
        process = try TestDaemon.start(directory, [])
    }

    private static func start(_ directory: TemporaryDirectory, _ extra: [String]) throws -> Subprocess {
        let process = try Subprocess(
            try Binaries.swiped,
            [
                "--socket", directory.file("s.sock"), "--state", directory.file("state"), "--durability",
                "normal",
            ] + extra)
        _ = try LineClient(path: directory.file("s.sock"), timeout: .seconds(15))
        return process
    }

    /// SIGTERM, then waits (and reaps).
    func stop() throws -> Termination {
        process.kill(SIGTERM)
        return try process.wait(timeout: .seconds(10))
    }
}
