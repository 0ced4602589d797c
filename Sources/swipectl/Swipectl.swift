// From the parsed command line to a command run against one conversation.
import SwipeEngine
import Wire

enum Swipectl {
    static func main(_ arguments: [String], environment: [String: String]) -> ExitStatus {
        do {
            switch try Arguments.parse(arguments) {
            case .usage:
                Output.out(Usage.text + "\n")
            case .version:
                Output.out("swipectl \(swipedVersion) (protocol \(protocolVersion))\n")
            case .run(let invocation):
                if case .replay(let file, let expect) = invocation.command {
                    try ReplayCommand.run(file: file, expect: expect)
                    return .ok
                }
                let socket = SocketChoice.resolve(option: invocation.socket, environment: environment)
                let token = try SignInToken.resolve(invocation.token, environment: environment)
                if case .tui(
                    let ascii, let rtl, let recordDirectory, let confirmDelete, let peek, let fullSwipe) =
                    invocation.command
                {
                    try Tui.run(
                        socket: socket, token: token, ascii: ascii, rtl: rtl,
                        recordDirectory: recordDirectory,
                        confirmDelete: confirmDelete, peek: peek, fullSwipe: fullSwipe,
                        environment: environment)
                    return .ok
                }
                let conversation = try Conversation(socket, json: invocation.json, token: token)
                if case .status = invocation.command { return try StatusCommand.run(conversation) }
                try run(invocation.command, conversation)
            }
            return .ok
        } catch {
            Output.error(error.message)
            return error.status
        }
    }

    static func run(_ command: Command, _ conversation: Conversation) throws(Failure) {
        switch command {
        case .list(let from, let limit, let match):
            try MovieCommands.list(conversation, from: from, limit: limit, match: match)
        case .add(let title, let image): try MovieCommands.add(conversation, title: title, image: image)
        case .toggleWatched(let movie): try MovieCommands.toggle(conversation, .watched, movie)
        case .toggleFriends(let movie): try MovieCommands.toggle(conversation, .friends, movie)
        case .remove(let movie): try MovieCommands.remove(conversation, movie)
        case .restore(let movie): try MovieCommands.restore(conversation, movie)
        case .move(let movie, let place): try MovieCommands.move(conversation, movie, to: place)
        case .undo(let seq): try MovieCommands.undo(conversation, seq: seq)
        case .watch(let from, let once): try Watch.run(conversation, from: from, once: once)
        case .history(let from, let limit, let by):
            try History.run(conversation, from: from, limit: limit, by: by)
        case .call(let line): try Call.run(conversation, line: line)
        case .help: try DaemonHelp.run(conversation)
        case .swipe(let movie, let gesture, let verbose):
            try Swipe.run(conversation, movie, gesture, verbose: verbose)
        case .tui: preconditionFailure("tui runs without a Conversation (main)")
        case .recordedSwipe(let movie, let gesture, let verbose, let file):
            try Swipe.record(conversation, movie, gesture, verbose: verbose, into: file)
        case .replay:
            preconditionFailure("replay needs no daemon; main runs it")
        case .status:
            preconditionFailure("status has an exit status of its own; main runs it")
        case .tokenCreate(let name, let role, let expiresIn):
            try PeopleCommands.tokenCreate(conversation, name: name, role: role, expiresIn: expiresIn)
        case .tokenList: try PeopleCommands.tokenList(conversation)
        case .tokenRevoke(let name, let id): try PeopleCommands.tokenRevoke(conversation, name: name, id: id)
        case .role(let name, let change): try PeopleCommands.role(conversation, name: name, change)
        case .denials: try PeopleCommands.denials(conversation)
        case .whoami: try PeopleCommands.whoami(conversation)
        }
    }
}
