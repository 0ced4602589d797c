// swiped: the daemon. Everything is in the Daemon library; this only reads the command line.
import Daemon
import DataTools
import Wire

#if canImport(Glibc)
    import Glibc
#endif

var environment: [String: String] = [:]
var entry = environ
while let pointer = entry.pointee {
    let pair = String(cString: pointer)
    if let equals = pair.firstIndex(of: "=") {
        environment[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
    }
    entry += 1
}

// `swiped backup|export|import|verify …`: the data tools (issue 32), not the daemon.
if let command = CommandLine.arguments.dropFirst().first, DataTools.subcommands.contains(command) {
    exit(DataTools.run(Array(CommandLine.arguments.dropFirst())))
}

switch Config.parse(Array(CommandLine.arguments.dropFirst()), environment: environment) {
case .help:
    print(Config.usage)
    exit(0)
case .version:
    print("swiped \(swipedVersion)")
    exit(0)
case .usageError(let message):
    Daemon.printError("swiped: \(message)\nTry 'swiped --help'.\n")
    exit(2)
case .run(let config):
    exit(serve(config: config, journal: Journal(maxPriority: config.logLevel)))
}
