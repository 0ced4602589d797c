// Who may do what (issue 45; protocol.md, "Who may do what"): every request checked against the
// op table's `needs` before it is handled, whatever lane decoded it; `auth` and the admins' ops
// asked of the manager, which holds the people tables and the throttles; a role changed while
// the connection lives.
import JSONCodec
import Movies
import People
import StoreCore
import Wire

/// What the Session asks the manager about people (`SessionAction.people`); answered with
/// `Session.peopleAnswered`.
public enum PeopleAsk: Equatable, Sendable {
    case auth(token: String)
    case tokenCreate(name: String, role: AccessRole, expiresIn: Int64?)
    case tokenList
    case tokenRevoke(name: String, id: String?)
    case role(name: String, RoleChange)
    case denials
}

/// The manager's answer to a `PeopleAsk`.
public enum PeopleAnswer: Equatable, Sendable {
    /// `auth` succeeded: the connection acts for this identity from now on.
    case signedIn(Identity)
    case tokenCreated(token: String, TokenRecord)
    case tokens([TokenRecord])
    case revoked(Int)
    case role(name: String, AccessRole?)
    case denials([Denial])
    case failed(WireError)
}

extension Session {
    /// Whether this connection's role may send an op of `kind`; if not, answers `forbidden`,
    /// tells the manager (a denial) and returns false.
    @inline(__always)
    func allowed(_ kind: OpSpec.Kind, id: [UInt8]?, op: String, _ sink: inout SessionActions) -> Bool {
        if Ops.needs(kind) <= role { return true }
        refuse(needs: Ops.needs(kind), id: id, op: op, &sink)
        return false
    }

    /// `forbidden`, with what was needed and who asked, and the denial for the manager.
    @inline(never)
    func refuse(needs: AccessRole, id: [UInt8]?, op: String, _ sink: inout SessionActions) {
        reply(id: id, op: op, error: forbidden(op, needs: needs), &sink)
        sink.append(.denied(op: op, .forbidden))
    }

    func forbidden(_ op: String, needs: AccessRole) -> WireError {
        let who = identity.user.map { "\($0) (\(identity.role))" } ?? "anonymous (\(identity.role))"
        var message = "\"\(op)\" needs the role \(needs); this connection is \(who)"
        if case .unix = identity.door, needs == .writer, let group = config.writersGroup {
            message += "; members of the group \"\(group)\" are writers"
        } else if case .anonymous = identity.door {
            message += "; sign in with auth"
        }
        return WireError(.forbidden, message)
    }

    /// The ops of people, all asked of the manager. Out of line: rare, and kept out of the
    /// request switch, which every drag and ping runs through (inlined there, these cases cost
    /// a ping ≈ 100 instructions: callgrind, BENCHMARKS.md).
    @inline(never)
    func askAboutPeople(_ request: Request, id: [UInt8]?, _ sink: inout SessionActions) {
        let what: PeopleAsk
        switch request {
        case .auth(let token): what = .auth(token: token)
        case .tokenCreate(let name, let role, let expiresIn):
            what = .tokenCreate(name: name, role: role, expiresIn: expiresIn)
        case .tokenList: what = .tokenList
        case .tokenRevoke(let name, let tokenID): what = .tokenRevoke(name: name, id: tokenID)
        case .role(let name, let change): what = .role(name: name, change)
        case .denials: what = .denials
        case .ping, .help, .options, .list, .add, .toggleWatched, .toggleWatchedWithFriends, .remove,
            .restore, .move,
            .undo, .subscribe, .unsubscribe, .history, .viewport, .configure, .drag, .release, .tap, .open,
            .perform, .peek, .close, .rows, .record, .recording, .share, .peers, .status:
            preconditionFailure("client \(config.client): \(request.kind) is not an op of people")
        }
        ask(what, id: id, &sink)
    }

    /// Parks the reply and asks the manager, holding the lines after it until it is answered:
    /// a request pipelined behind `auth` is judged as the person it signed in as, a
    /// `token-list` behind `token-create` lists the new token.
    func ask(_ what: PeopleAsk, id: [UInt8]?, _ sink: inout SessionActions) {
        let ticket = sink.takeTicket()
        replies.park(.read(ticket: ticket, id: id))
        heldBy = ticket
        sink.append(.people(ticket: ticket, what))
    }

    /// The manager's answer to the `PeopleAsk` of `ticket`.
    @usableFromInline
    func peopleAnswered(
        _ ticket: UInt64, _ answer: PeopleAnswer, _ state: borrowing MovieState, _ sink: inout SessionActions
    ) {
        if heldBy == ticket {
            heldBy = nil
            if case .signedIn(let who) = answer { identity = who }
        }
        guard isOpenForEvents else { return }
        let filled = replies.fill(read: ticket) { out, id in
            switch answer {
            case .signedIn(let who): Encode.signedIn(&out, id: id, user: who.user ?? "", role: who.role)
            case .tokenCreated(let token, let record):
                Encode.tokenCreated(&out, id: id, token: token, record: record)
            case .tokens(let list): Encode.tokenList(&out, id: id, list)
            case .revoked(let n): Encode.revoked(&out, id: id, count: n)
            case .role(let name, let role): Encode.roleGiven(&out, id: id, name: name, role: role)
            case .denials(let list): Encode.denials(&out, id: id, list)
            case .failed(let error): Encode.error(&out, id: id, error)
            }
        }
        precondition(filled, "client \(config.client): no reply waits for people ticket \(ticket)")
        if case .failed(let error) = answer { sink.metrics.failed(code: error.code.metricsIndex) }
        releaseDue(state, &sink)
        answerLines(state, &sink)
        settle()
    }

    /// The manager re-judged this connection (a role given or taken back, a token revoked or
    /// expired, the groups re-read on SIGHUP): it acts as `who` from the next request on, and is
    /// told so by a `role` event. When the token it signed in with went (`tokenLost`: its
    /// person), a first event says that person has no rights here any more (role none), a second
    /// who the connection is now (its own user, or anonymous). Rights that drop to none end the
    /// connection (`bye`, revoked).
    @usableFromInline
    func identityChanged(_ who: Identity, tokenLost: String? = nil, _ sink: inout SessionActions) {
        guard who != identity, isOpenForEvents else { return }
        let before = identity
        identity = who
        if let lost = tokenLost {
            replies.push { Encode.roleEvent(&$0, user: lost, role: .none) }
        } else if who.role == before.role && who.user == before.user {
            // Another door for the same person and role says nothing new to the peer.
            return
        }
        replies.push { Encode.roleEvent(&$0, user: who.user, role: who.role) }
        if who.role == .none && before.role > .none {
            sink.append(.denied(op: "", .noRights))
            goodbye(.revoked, &sink)
        }
        settle()
    }
}
