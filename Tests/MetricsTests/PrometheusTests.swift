import Foundation
import Metrics
import TestSupport
import XCTest

final class PrometheusTests: XCTestCase {
    var text: String { Prometheus.text(MetricsSample.snapshot()) }
    var lines: [Substring] { text.split(separator: "\n") }

    func testTheFixedNamesAreThere() {
        let t = text
        for line in [
            #"swiped_build_info{version="0.1.0",protocol="1"} 1"#,
            "swiped_clients 5",
            "swiped_clients_peak 6",
            "swiped_clients_dropped_total 1",
            #"swiped_requests_total{op="toggle-watched"} 20"#,
            #"swiped_errors_total{code="conflict"} 1"#,
            #"swiped_errors_total{code="bad-json"} 0"#,
            #"swiped_request_duration_seconds_count{class="mutation"} 20"#,
            #"swiped_request_duration_seconds_sum{class="mutation"} 0.03"#,
            #"swiped_request_duration_seconds_bucket{class="drag",le="0.000016384"} 100"#,
            #"swiped_request_duration_seconds_bucket{class="mutation",le="0.001048576"} 0"#,
            #"swiped_request_duration_seconds_bucket{class="mutation",le="0.002097152"} 20"#,
            #"swiped_request_duration_seconds_bucket{class="mutation",le="+Inf"} 20"#,
            "swiped_commit_duration_seconds_count 20",
            "swiped_commit_events_bucket{le=\"1\"} 20",
            "swiped_commit_events_sum 20",
            "swiped_store_up 1",
            #"swiped_store_state{state="ok"} 1"#,
            #"swiped_store_state{state="reconnecting"} 0"#,
            "swiped_log_size_bytes 98304",
            "process_resident_memory_bytes 12345678",
            "process_open_fds 17",
            "process_start_time_seconds 1764752400",
        ] {
            XCTAssertTrue(t.contains("\n" + line + "\n"), "missing: \(line)\n\(t)")
        }
    }

    func testEveryFamilyHasHelpAndTypeOnceBeforeItsSamples() {
        var declared: [String: String] = [:]
        var helped: Set<String> = []
        for line in lines {
            if line.hasPrefix("# HELP ") {
                let name = String(line.dropFirst(7).prefix { $0 != " " })
                XCTAssertTrue(helped.insert(name).inserted, "HELP twice: \(name)")
            } else if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                XCTAssertNil(declared[String(parts[0])], "TYPE twice: \(parts[0])")
                XCTAssertTrue(helped.contains(String(parts[0])), "TYPE before HELP: \(parts[0])")
                declared[String(parts[0])] = String(parts[1])
            } else {
                let name = String(line.prefix { $0 != "{" && $0 != " " })
                let family = ["_bucket", "_sum", "_count"].reduce(name) { n, suffix in
                    declared[n] == nil && n.hasSuffix(suffix) ? String(n.dropLast(suffix.count)) : n
                }
                XCTAssertNotNil(declared[family], "sample of no declared family: \(line)")
                if declared[family] == "counter" { XCTAssertTrue(family.hasSuffix("_total"), family) }
                if declared[family] != "counter" { XCTAssertFalse(family.hasSuffix("_total"), family) }
            }
        }
    }

    func testBucketsAreCumulativeAndEndWithInf() {
        let drag = lines.filter { $0.hasPrefix(#"swiped_request_duration_seconds_bucket{class="drag""#) }
        XCTAssertEqual(drag.count, 22)
        XCTAssertTrue(drag.last!.contains(#"le="+Inf""#))
        let counts = drag.map { Int($0.split(separator: " ").last!)! }
        XCTAssertEqual(counts, counts.sorted())
        XCTAssertTrue(drag[20].contains(#"le="17.179869184""#), String(drag[20]))
    }

    func testTheStoreStateShowsInUpAndState() {
        let t = Prometheus.text(MetricsSample.snapshot(state: .reconnecting))
        XCTAssertTrue(t.contains("\nswiped_store_up 0\n"))
        XCTAssertTrue(t.contains("\nswiped_store_state{state=\"reconnecting\"} 1\n"))
        XCTAssertTrue(t.contains("\nswiped_store_state{state=\"ok\"} 0\n"))
    }

    func testPostgresShowsTheReadAgeAndNoFileSize() {
        let t = Prometheus.text(
            MetricsSample.snapshot(
                location: .postgres(host: "db", port: 5432, database: "swiped", lastReadSeconds: 0.25)))
        XCTAssertTrue(t.contains("\nswiped_store_last_read_age_seconds 0.25\n"))
        XCTAssertFalse(t.contains("swiped_log_size_bytes"))
        XCTAssertFalse(t.contains("db"), "the server's name is not a metric")
    }

    func testLabelValuesAreEscaped() {
        var s = MetricsSample.snapshot()
        s.server.version = "a\"b\\c\nd"
        XCTAssertTrue(Prometheus.text(s).contains(#"swiped_build_info{version="a\"b\\c\nd",protocol="1"} 1"#))
    }

    /// The golden exposition that Tests/metrics/prometheus_test.py checks with promtool and
    /// serves to a real Prometheus: regenerate with SWIPED_WRITE_GOLDEN=1.
    func testTheGoldenExpositionIsTheEncodersOutput() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../metrics/sample.prom").standardized
        if ProcessInfo.processInfo.environment["SWIPED_WRITE_GOLDEN"] == "1" {
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        XCTAssertEqual(try String(contentsOf: url, encoding: .utf8), text)
    }
}

final class HealthTests: XCTestCase {
    func testOnlyAnOKStoreIsHealthy() {
        XCTAssertNil(MetricsSnapshot.StoreState.ok.healthProblem)
        XCTAssertEqual(
            MetricsSnapshot.StoreState.unavailable.healthProblem,
            "the store is unavailable: writes fail until it is back")
        XCTAssertNotNil(MetricsSnapshot.StoreState.reconnecting.healthProblem)
    }
}
