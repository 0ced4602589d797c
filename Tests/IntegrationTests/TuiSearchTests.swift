import Foundation
import Glibc
import XCTest

/// `/` and the keys that move far, end to end in tmux: the keys a terminal sends (`send-keys`),
/// the screen read back (`capture-pane -p -e`). The daemon's ten movies; 24 lines show six.
final class TuiSearchTests: TuiTestCase {
    /// The line (from 0) whose row has the selection marker, and its text.
    func selected(_ screen: String) -> String? {
        screen.split(separator: "\n").map(String.init).first { $0.hasPrefix(" ▶ ") }
    }

    func testSlashSearchesTheTitlesAndNGoesToTheNextMatch() throws {
        try startTui()
        try tmux.send(keys: "/")
        try tmux.waitForScreen("the search prompt") {
            Tmux.line($0, 22).hasPrefix(" Search: ▏") && Tmux.line($0, 23).hasPrefix(" ⏎ done  Esc ends")
        }
        // "the": The Godfather, The Dark Knight, The Matrix, The Silence of the Lambs, The Green
        // Mile; the first from the selected row is The Godfather itself.
        try tmux.send(keys: "the")
        try tmux.waitForScreen("five matches") { Tmux.line($0, 23).hasPrefix(" 1 of 5  ⏎ done  Esc ends") }
        // Narrowed to one far down the list: it is selected and scrolled into view.
        try tmux.send(keys: " gr")
        var screen = try tmux.waitForScreen("the green mile") { [self] in
            selected($0)?.contains("The Green Mile") == true && Tmux.line($0, 23).hasPrefix(" 1 of 1")
        }
        XCTAssertTrue(Tmux.line(screen, 22).hasPrefix(" Search: the gr▏"), screen)
        XCTAssertFalse(screen.contains("The Godfather"), "scrolled:\n\(screen)")
        // The selected row in its background colour (236).
        let colored = try tmux.capture(colors: true)
        let row =
            colored.split(separator: "\n").first { $0.contains("The Green Mile") }.map(String.init) ?? ""
        XCTAssertTrue(row.contains("48;5;236"), row)
        // Backspaces widen it again (back to the first match from where / was pressed); Enter
        // keeps it; n and N go round the matches.
        try tmux.send(keys: "BSpace", "BSpace", "BSpace", "Enter")
        screen = try tmux.waitForScreen("the kept search") {
            Tmux.line($0, 23).hasPrefix(" “the”: 1 of 5  n next  N previous  / again  Esc ends")
        }
        XCTAssertTrue(selected(screen)?.contains("The Godfather") == true, screen)
        try tmux.send(keys: "n")
        try tmux.waitForScreen("the dark knight") { [self] in
            selected($0)?.contains("The Dark Knight") == true && Tmux.line($0, 23).hasPrefix(" “the”: 2 of 5")
        }
        try tmux.send(keys: "N", "N")
        try tmux.waitForScreen("round to the last") { [self] in
            selected($0)?.contains("The Green Mile") == true && Tmux.line($0, 23).hasPrefix(" “the”: 5 of 5")
        }
        // Escape ends the search where it is; the footer names the keys again.
        try tmux.send(keys: "Escape")
        screen = try tmux.waitForScreen("the keys") { Tmux.line($0, 23).hasPrefix(" ↑↓ select") }
        XCTAssertTrue(selected(screen)?.contains("The Green Mile") == true, screen)
        XCTAssertTrue(Tmux.line(screen, 23).contains("/ search"), screen)
    }

    func testHomeEndAndPagesMoveTheSelection() throws {
        try startTui()
        try tmux.send(keys: "End")
        try tmux.waitForScreen("the last") { [self] in selected($0)?.contains("The Green Mile") == true }
        try tmux.send(keys: "PPage")
        try tmux.waitForScreen("a page up") { [self] in selected($0)?.contains("Forrest Gump") == true }
        try tmux.send(keys: "Home")
        try tmux.waitForScreen("the first") { [self] in selected($0)?.contains("The Godfather") == true }
        try tmux.send(keys: "NPage")
        try tmux.waitForScreen("a page down") { [self] in selected($0)?.contains("Se7en") == true }
    }
}
