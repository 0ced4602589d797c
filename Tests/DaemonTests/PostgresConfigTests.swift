// --postgres and SWIPED_POSTGRES (issue 17): the option wins, an empty variable is unset, and a
// connection string with a password is a usage error that does not repeat it.
import XCTest

@testable import Daemon

final class PostgresConfigTests: XCTestCase {
    private func parse(_ args: [String], _ env: [String: String] = [:]) -> Config.ParseOutcome {
        Config.parse(args, environment: env)
    }

    func testTheOptionWinsOverTheEnvironment() {
        XCTAssertEqual(parse([]).postgres, .some(nil))
        XCTAssertEqual(parse([], ["SWIPED_POSTGRES": ""]).postgres, .some(nil))
        XCTAssertEqual(parse([], ["SWIPED_POSTGRES": "dbname=a"]).postgres, "dbname=a")
        XCTAssertEqual(
            parse(["--postgres", "host=/run/postgresql dbname=b"], ["SWIPED_POSTGRES": "dbname=a"]).postgres,
            "host=/run/postgresql dbname=b")
        XCTAssertEqual(
            parse(["--postgres=postgresql://swiped@db/swiped"]).postgres, "postgresql://swiped@db/swiped")
        guard case .usageError(let m) = parse(["--postgres"]) else { return XCTFail("no usage error") }
        XCTAssertTrue(m.hasPrefix("--postgres needs a connection string"), m)
    }

    func testAPasswordIsAUsageErrorThatDoesNotRepeatIt() {
        for (args, env, name) in [
            (["--postgres", "dbname=swiped password=s3cret"], [:], "--postgres"),
            (["--postgres", "postgresql://swiped:s3cret@db/swiped"], [:], "--postgres"),
            ([], ["SWIPED_POSTGRES": "postgresql://swiped:s3cret@db/swiped"], "SWIPED_POSTGRES"),
        ] as [([String], [String: String], String)] {
            guard case .usageError(let m) = parse(args, env) else {
                return XCTFail("\(args) \(env) accepted")
            }
            XCTAssertTrue(m.hasPrefix("\(name) must not contain a password"), m)
            XCTAssertFalse(m.contains("s3cret"), m)
        }
    }

    /// A dbname inside CONNINFO is a database's name (libpq expands only CONNINFO itself),
    /// even one that starts like a URI's scheme (`postgres` is PostgreSQL's default database) or
    /// has an `=`; one spelled as a connection string with a password is refused all the same,
    /// since it shows in ps.
    func testADatabaseNamedPostgresIsADatabaseAndANestedConnectionStringIsChecked() {
        for conninfo in [
            "dbname=postgres", "host=/run/postgresql dbname=postgres user=swiped", "dbname=postgres_x",
            "postgresql:///postgres", "postgresql://swiped@db/postgresql", "dbname=postgresql",
            "dbname='a=b'", "dbname='postgresql://db:port/'",
        ] {
            XCTAssertEqual(parse(["--postgres", conninfo]).postgres, conninfo)
        }
        for nested in [
            "dbname='postgresql://swiped:s3cret@db/swiped'", "dbname='postgres://swiped:s3cret@db/swiped'",
            "dbname='host=db password=s3cret'",
        ] {
            guard case .usageError(let m) = parse(["--postgres", nested]) else {
                return XCTFail("\(nested) accepted")
            }
            XCTAssertTrue(m.hasPrefix("--postgres must not contain a password"), m)
            XCTAssertFalse(m.contains("s3cret"), m)
        }
        guard case .usageError(let m) = parse(["--postgres", "no such thing"]) else {
            return XCTFail("a string that is no connection string accepted")
        }
        XCTAssertTrue(m.hasPrefix("--postgres is not a libpq connection string"), m)
    }

    func testHelpNamesTheOption() {
        XCTAssertTrue(Config.usage.contains("--postgres CONNINFO"))
        XCTAssertTrue(Config.usage.contains("$SWIPED_POSTGRES"))
    }
}

extension Config.ParseOutcome {
    /// The connection string of a parse that succeeded; nil (no value) for any other outcome.
    fileprivate var postgres: String?? {
        if case .run(let c) = self { return .some(c.postgres) }
        return nil
    }
}
