import Foundation
import Glibc
import XCTest

/// The movie's image as a poster tile in `swipectl tui` (issue 29): a letter on a colour made
/// from the image's name (docs/tui.md, "What a row shows"), the same width on every row, for the
/// seed's images and for one a user adds with `swipectl add --image`.
final class TuiPosterTileTests: TuiTestCase {
    func testEachRowStartsWithItsImagesTileAndAnAddedImageGetsOneToo() throws {
        try startTui(height: 40)
        // The seed's images are the ids: dark_knight is palette 7 (#AD1457, 125 of the 256),
        // pulp_fiction 1 (#9A4A00, 94); white (231) bold letters.
        let screen = try tmux.capture(colors: true)
        XCTAssertTrue(Tmux.line(screen, 5).contains("\u{1B}[38;5;231m\u{1B}[48;5;125mD "), screen)
        XCTAssertTrue(Tmux.line(screen, 8).contains("\u{1B}[48;5;94mP "), screen)
        let text = try tmux.capture()
        for (line, title) in [(2, "G  The Godfather"), (5, "D  The Dark Knight"), (8, "P  Pulp Fiction")] {
            XCTAssertEqual(column(of: title, in: text, line: line), 3, text)
        }
        // Any printable name: its first letter or digit, uppercased ("ñ" here); FNV-1a of
        // "¡ñu!" is 6 mod 8: #5E35B1, 61 of the 256.
        let added = try Subprocess.run(
            try Binaries.swipectl, ["--socket", daemon.socketPath, "add", "--image", "¡ñu!", "Heat"])
        XCTAssertEqual(added.status, .exited(0), added.standardError)
        let plain = try tmux.waitForScreen("the added movie") { $0.contains("Heat") }
        let n = (0..<40).first { Tmux.line(plain, $0).contains("Heat") }!
        XCTAssertEqual(column(of: "Ñ  Heat", in: plain, line: n), 3, plain)
        XCTAssertTrue(Tmux.line(try tmux.capture(colors: true), n).contains("\u{1B}[48;5;61mÑ "))
    }
}
