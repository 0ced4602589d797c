import XCTest

@testable import swipectl

/// What swipectl's command-line tests ask of `Arguments.parse`: the command a line makes, or the
/// first line of the usage error it gives (which must end by pointing at `--help`).
extension XCTestCase {
    func command(_ arguments: String...) throws -> Command {
        guard case .run(let invocation) = try Arguments.parse(arguments) else {
            XCTFail("\(arguments) is no command")
            throw Failure(.usage, "no command")
        }
        return invocation.command
    }

    func usage(_ arguments: String..., file: StaticString = #filePath, line: UInt = #line) -> String {
        usage(arguments, file: file, line: line)
    }

    func usage(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let outcome = try Arguments.parse(arguments)
            XCTFail("\(arguments) parsed: \(outcome)", file: file, line: line)
            return ""
        } catch {
            XCTAssertEqual(error.status, .usage, file: file, line: line)
            XCTAssertTrue(
                error.message.hasSuffix("\nTry 'swipectl --help'."), error.message, file: file, line: line)
            return String(error.message.prefix { $0 != "\n" })
        }
    }
}
