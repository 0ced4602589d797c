// The `help` reply: one JSON line describing all of protocol 1, from the declarations.
import JSONCodec
import SwipeEngine
import XCTest

@testable import Wire

final class HelpTests: XCTestCase {
    func help(id: [UInt8]? = nil) throws -> (bytes: [UInt8], reply: JSONObject) {
        var out = JSONWriter()
        Encode.help(&out, id: id)
        let reply = try XCTUnwrap(try JSONParser.parse(out.bytes).objectValue)
        return (out.bytes, reply)
    }

    func names(_ reply: JSONObject, _ list: String, _ key: String) -> [String] {
        (reply[list]?.arrayValue ?? []).compactMap { $0.objectValue?[key]?.stringValue }
    }

    func testHelpIsOneLineThatParses() throws {
        let (bytes, reply) = try help(id: Array("7".utf8))
        XCTAssertEqual(bytes.last, 0x0A)
        XCTAssertEqual(bytes.filter { $0 == 0x0A }.count, 1)
        XCTAssertEqual(reply["id"], 7)
        XCTAssertEqual(reply["ok"], true)
        XCTAssertEqual(reply["protocol"], .number(JSONNumber(protocolVersion)))
    }

    func testHelpListsEveryOpErrorObjectAndEvent() throws {
        let reply = try help().reply
        XCTAssertEqual(names(reply, "ops", "op"), OpSpec.Kind.allCases.map(\.rawValue))
        XCTAssertEqual(names(reply, "errors", "code"), ErrorCode.allCases.map(\.rawValue))
        for error in reply["errors"]?.arrayValue ?? [] {
            XCTAssertFalse(error.objectValue?["summary"]?.stringValue?.isEmpty ?? true, "\(error)")
        }
        XCTAssertEqual(
            Set(names(reply, "objects", "object")),
            [
                "movie", "event", "row", "button", "spring", "accessibilityAction", "action", "viewport",
                "crossing", "token", "denial",
                "status",
                "statusServer", "statusStore", "statusClients", "statusLatency", "statusCommits",
                "statusProcess", "statusWeb", "statusConnection",
                "histogram",
            ])
        XCTAssertEqual(names(reply, "events", "event"), ["hello", "bye", "role", "movie", "row", "peer-row"])
        let bye = try XCTUnwrap(reply["events"]?.arrayValue?[1].objectValue)
        XCTAssertEqual(names(bye, "reasons", "reason"), ByeReason.allCases.map(\.rawValue))
    }

    /// Every object a field refers to is described too.
    func testEveryTypeNamedIsDescribed() throws {
        let reply = try help().reply
        let scalars: Set = ["string", "integer", "number", "boolean", "any", "actions", "array"]
        let objects = Set(names(reply, "objects", "object"))
        var fields: [JSONObject] = []
        for list in ["ops", "objects", "events"] {
            for entry in reply[list]?.arrayValue ?? [] {
                let members = entry.objectValue?["args"] ?? entry.objectValue?["fields"]
                fields += (members?.arrayValue ?? []).compactMap(\.objectValue)
            }
        }
        XCTAssertGreaterThan(fields.count, 50)
        for field in fields {
            let type = try XCTUnwrap(field["type"]?.stringValue, "\(field)")
            XCTAssertTrue(scalars.contains(type) || objects.contains(type), "\(field)")
            if let items = field["items"]?.stringValue { XCTAssertTrue(objects.contains(items), "\(field)") }
            XCTAssertNotNil(field["required"]?.boolValue, "\(field)")
        }
    }

    /// What the table declares is what help says, e.g. history's limit and viewport's width.
    func testArgumentsCarryTheirDeclaredRangesAndDefaults() throws {
        let reply = try help().reply
        func arg(_ op: String, _ name: String) throws -> JSONObject {
            let ops = reply["ops"]?.arrayValue?.compactMap(\.objectValue) ?? []
            let spec = try XCTUnwrap(ops.first { $0["op"]?.stringValue == op }, op)
            let args = spec["args"]?.arrayValue?.compactMap(\.objectValue) ?? []
            return try XCTUnwrap(args.first { $0["name"]?.stringValue == name }, "\(op).\(name)")
        }
        let limit = try arg("history", "limit")
        XCTAssertEqual(limit["min"], 1)
        XCTAssertEqual(limit["max"], 1000)
        XCTAssertEqual(limit["default"], 100)
        let width = try arg("viewport", "width")
        XCTAssertEqual(width["min"], 100)
        XCTAssertEqual(width["max"], 4000)
        XCTAssertEqual(width["default"], .number(JSONNumber(Rules.defaultRowWidth)))
        XCTAssertEqual(try arg("viewport", "direction")["values"], ["ltr", "rtl"])
        let rows = try arg("options", "rows")
        XCTAssertEqual(rows["values"], ["full", "compact"])
        XCTAssertEqual(rows["default"], "full")
        XCTAssertEqual(rows["required"], false)
        XCTAssertEqual(try arg("toggle-watched", "key")["maxBytes"], 128)
        XCTAssertEqual(try arg("drag", "movie")["required"], true)
        let leading = try arg("configure", "leading")
        XCTAssertEqual(leading["items"], "action")
        XCTAssertEqual(leading["maxItems"], .number(JSONNumber(Limits.actionsPerEdge)))
    }
}
