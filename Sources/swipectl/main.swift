// swipectl: a command-line client of swiped, for people and scripts (swipectl(1)).
#if canImport(Glibc)
    import Glibc
#endif

var environment: [String: String] = [:]
for name in ["SWIPED_SOCKET", "SWIPED_TOKEN", "XDG_RUNTIME_DIR", "COLORTERM"] {
    if let value = getenv(name) { environment[name] = String(cString: value) }
}
TerminalText.useLocale()
exit(Swipectl.main(Array(CommandLine.arguments.dropFirst()), environment: environment).rawValue)
