// `help` declares every field of the `status` reply (StatusSchema.swift), and the reply holds
// every field declared as always present: for writers and readers, for both stores.
import JSONCodec
import Metrics
import TestSupport
import Wire
import XCTest

final class StatusSchemaTests: XCTestCase {
    func check(_ o: JSONObject, as name: String, _ path: String) {
        guard let spec = Schema.objects.first(where: { $0.name == name }) else {
            return XCTFail("\(path): no object \(name) in help")
        }
        for key in o.keys {
            guard let field = spec.fields.first(where: { $0.name == key }) else {
                XCTFail("\(path).\(key) is not declared in \(name)")
                continue
            }
            if case .object(let inner) = field.type {
                guard let value = o[key]?.objectValue else {
                    XCTFail("\(path).\(key) is not an object")
                    continue
                }
                check(value, as: inner, "\(path).\(key)")
            }
        }
        for field in spec.fields where field.required {
            XCTAssertNotNil(o[field.name], "\(path).\(field.name) is declared always present")
        }
    }

    func testHelpDeclaresEveryFieldOfTheReply() throws {
        let postgres = MetricsSnapshot.Store.Location.postgres(
            host: "db.example", port: 5433, database: "movies", lastReadSeconds: 0.5)
        for location in [nil, postgres] {
            for detail in [true, false] {
                var out = JSONWriter()
                Encode.status(&out, id: nil, MetricsSample.snapshot(location: location), detail: detail)
                let reply = try XCTUnwrap(
                    try JSONParser.parse(String(decoding: out.bytes, as: UTF8.self)).objectValue)
                check(try XCTUnwrap(reply["status"]?.objectValue), as: "status", "status")
            }
        }
    }
}
