// People and their rights in the manager (issue 45; protocol.md, "Who may do what"): who each
// connection is when it opens, `auth` (slowed per address after failures), the admins' ops on
// the people store, re-judging every live connection when the tables or the groups change (a
// revocation reaches a connection within a second, on every daemon of one database), the rate
// limit per person, and the denials (journal, metrics, `denials`).
//
// The Session checks each request against its role (Session+People.swift); the manager decides
// what the role is, since it holds the tables, the groups and the clock.
import HTTPScrape
import JSONCodec
import People
import Session
import StoreCore
import WebSocket
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// An admin's change waiting for the people store: whose, and what to answer.
struct PeopleWaiting {
    let client: UInt64
    let ticket: UInt64
    let answer: Answer

    enum Answer {
        case tokenCreated(token: String, TokenRecord)
        case revoked(name: String, id: String?)
        case role(name: String, AccessRole?)
    }
}

/// An `auth` answered after its address's delay (`AuthThrottle`).
struct DelayedAuth {
    let due: UInt64
    let client: UInt64
    let ticket: UInt64
    let token: String
}

extension Server {
    /// How often the manager looks for tokens that expired (a connection signed in with one is
    /// re-judged within this, and so within a second).
    static var expiryCheckMicroseconds: UInt64 { 250_000 }

    /// Wall-clock microseconds since the epoch (token times are wall-clock: they are stored).
    var wallNow: UInt64 { UInt64(max(0, Self.wallMicroseconds())) }

    // MARK: - Who a connection is

    /// A Unix user's name (the account database's), `uid:N` when it has none.
    static func userName(_ uid: UInt32) -> String {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        if getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, let found = result,
            let name = found.pointee.pw_name
        {
            let text = String(cString: name)
            if PersonName.problem(text) == nil { return text }
        }
        return "uid:\(uid)"
    }

    /// What `base` is now, by the groups and the roles given.
    func judge(_ base: BaseIdentity, peer: Peer) -> Identity {
        switch base {
        case .unix(let name, let uid):
            return Identity(
                user: name,
                role: peopleTables.role(of: name, door: .unix(uid: uid), doorRole: access.role(of: peer)),
                door: .unix(uid: uid))
        case .proxy(let name):
            return Identity(
                user: name, role: peopleTables.role(of: name, door: .proxy, doorRole: config.webProxyRole),
                door: .proxy)
        case .anonymous:
            return .anonymous(config.webAnonymous)
        }
    }

    /// What `c` is now: signed in with a token that still works, its person's role; else its
    /// base identity's.
    func judge(_ c: Connection) -> Identity {
        if case .token(let id) = c.session.identity.door {
            if let (name, role) = peopleTables.role(ofToken: id, at: wallNow) {
                return Identity(user: name, role: role, door: .token(id: id))
            }
        }
        return judge(c.base, peer: c.peer)
    }

    /// Re-judges every connection (the tables changed, a token expired, SIGHUP): each whose
    /// identity changed hears it, at once.
    func rejudgeAll(why: String) {
        var changed = 0
        for c in connections.values {
            let who = judge(c)
            guard who != c.session.identity else { continue }
            let before = c.session.identity
            changed += 1
            let lost: String? =
                if case .token = before.door, who.door != before.door { before.user } else { nil }
            round(c, .identityChanged(who, tokenLost: lost))
            journal.log(
                .info, "connection re-judged",
                [
                    ("CLIENT", "\(c.client)"), ("USER", who.user ?? "-"), ("ROLE", who.role.rawValue),
                    ("WAS", "\(before.user ?? "-") (\(before.role))"), ("REASON", why),
                ])
            afterWork(c)
        }
        if changed > 0 { markStatusDirty() }
    }

    // MARK: - The people store

    func peopleCompleted() {
        let done = people.completions()
        for note in done.notes {
            journal.log(note.level == .warning ? .warning : .info, note.message, [("REASON", note.reason)])
        }
        // The tables first: an answer's lines may read them (a token-list after a token-create).
        if let tables = done.tables {
            let rightsChanged = !tables.sameRights(as: peopleTables)
            peopleTables = tables
            if rightsChanged { rejudgeAll(why: "people tables changed") }
        }
        for result in done.results {
            guard let waiting = peopleWaiting.removeValue(forKey: result.token) else {
                // A `touch` (token 0), whose outcome nobody waits for.
                if case .failure(let error) = result.result {
                    journal.logFolded(
                        .warning, "cannot record when a token was last used, going on without",
                        fold: "touch", [("ERROR", error.description)])
                }
                continue
            }
            let answer: PeopleAnswer
            switch (result.result, waiting.answer) {
            case (.failure(let error), _):
                journal.log(
                    .warning, "a change to the people tables failed, nothing changed",
                    [("CLIENT", "\(waiting.client)"), ("ERROR", error.description)])
                answer = .failed(WireError(error))
            case (.success, .tokenCreated(let token, let record)):
                answer = .tokenCreated(token: token, record)
            case (.success(let n), .revoked(let name, let id)):
                answer =
                    n > 0
                    ? .revoked(n)
                    : .failed(
                        WireError(
                            .notFound,
                            id.map { "\(name) has no token with id \($0)" } ?? "\(name) has no token"))
            case (.success, .role(let name, let role)):
                answer = .role(name: name, role)
            }
            answerPeople(client: waiting.client, ticket: waiting.ticket, answer)
        }
    }

    /// Answers `client`'s ticket, if the connection is still there.
    func answerPeople(client: UInt64, ticket: UInt64, _ answer: PeopleAnswer) {
        guard let c = connections[client] else { return }
        round(c, .peopleAnswered(ticket: ticket, answer))
        afterWork(c)
    }

    /// A `PeopleAsk` from `c`: answered now (the answer is returned, for `perform` to have heard),
    /// or later (nil: after the store's change, or after the address's sign-in delay).
    func asked(_ what: PeopleAsk, ticket: UInt64, from c: Connection) -> PeopleAnswer? {
        switch what {
        case .auth(let token):
            let delay = authThrottle.delay(for: c.address, now: loop.now)
            guard delay > 0 else { return authenticate(token, c) }
            delayAuth(DelayedAuth(due: loop.now + delay, client: c.client, ticket: ticket, token: token))
            return nil
        case .tokenCreate(let name, let role, let expiresIn):
            let (token, record) = Tokens.make(name: name, role: role, now: wallNow, expiresIn: expiresIn)
            return change(.createToken(record), ticket: ticket, c, .tokenCreated(token: token, record))
        case .tokenList:
            return .tokens(peopleTables.tokens)
        case .tokenRevoke(let name, let id):
            return change(.revokeTokens(name: name, id: id), ticket: ticket, c, .revoked(name: name, id: id))
        case .role(let name, .ask):
            return .role(name: name, peopleTables.grants[name])
        case .role(let name, .give(let role)):
            return change(.setRole(name: name, role: role), ticket: ticket, c, .role(name: name, role))
        case .role(let name, .takeBack):
            return change(.setRole(name: name, role: nil), ticket: ticket, c, .role(name: name, nil))
        case .denials:
            return .denials(denials.latest)
        }
    }

    private func change(
        _ change: PeopleChange, ticket: UInt64, _ c: Connection, _ answer: PeopleWaiting.Answer
    ) -> PeopleAnswer? {
        peopleWaiting[ticket] = PeopleWaiting(client: c.client, ticket: ticket, answer: answer)
        people.submit(change, token: ticket)
        journal.log(
            .notice, "people tables changed by an admin",
            [
                ("CLIENT", "\(c.client)"), ("USER", c.session.identity.user ?? "-"),
                ("CHANGE", describe(change)),
            ])
        return nil
    }

    private func describe(_ change: PeopleChange) -> String {
        switch change {
        case .createToken(let t):
            "token \(t.id) for \(t.name) (\(t.role))"
                + (t.expires.map { ", expires \(RFC3339.format(microsecondsSinceEpoch: Int64($0)))" } ?? "")
        case .revokeTokens(let name, let id): "revoke \(name)'s " + (id.map { "token \($0)" } ?? "tokens")
        case .setRole(let name, let role?): "role of \(name): \(role)"
        case .setRole(let name, nil): "role of \(name): taken back"
        case .touch(let id, _): "token \(id) used"
        }
    }

    // MARK: - auth

    /// Checks `token` for `c`: the same time whether it is close to a real one or not (it is
    /// hashed, then looked up by hash: People's `PeopleTables.token(hash:)`).
    func authenticate(_ token: String, _ c: Connection) -> PeopleAnswer {
        let now = wallNow
        guard let record = peopleTables.token(hash: Tokens.hash(token)) else {
            return authFailed(c, .badToken, "no such token (never made, or revoked)")
        }
        guard !record.expired(at: now) else {
            return authFailed(c, .expiredToken, "this token expired; ask an admin for a new one")
        }
        let role = peopleTables.role(of: record.name, door: .token(id: record.id), doorRole: record.role)
        guard role > .none else {
            return authFailed(c, .noRights, "\(record.name) has no rights here (an admin gave the role none)")
        }
        authThrottle.succeeded(c.address)
        if record.lastUsed.map({ now &- $0 >= 60_000_000 }) ?? true {
            // Recorded at most once a minute: a sign-in is not a write to the database.
            people.submit(.touch(id: record.id, at: now), token: 0)
        }
        journal.log(
            .info, "signed in",
            [
                ("CLIENT", "\(c.client)"), ("USER", record.name), ("ROLE", role.rawValue),
                ("TOKEN_ID", record.id),
            ])
        markStatusDirty()
        return .signedIn(Identity(user: record.name, role: role, door: .token(id: record.id)))
    }

    private func authFailed(_ c: Connection, _ reason: DenialReason, _ message: String) -> PeopleAnswer {
        authThrottle.failed(c.address, now: loop.now)
        deny(c, op: "auth", reason)
        return .failed(WireError(.forbidden, message))
    }

    private func delayAuth(_ auth: DelayedAuth) {
        let i = delayedAuths.firstIndex { $0.due > auth.due } ?? delayedAuths.endIndex
        delayedAuths.insert(auth, at: i)
        armAuthTimer()
    }

    func armAuthTimer() {
        guard let first = delayedAuths.first else { return }
        authTimer?.arm(afterMicroseconds: max(1_000, first.due &- loop.now))
    }

    /// The sign-ins whose delay is over.
    func authTimerFired() {
        let now = loop.now
        while let first = delayedAuths.first, first.due <= now {
            delayedAuths.removeFirst()
            guard let c = connections[first.client] else { continue }
            answerPeople(client: c.client, ticket: first.ticket, authenticate(first.token, c))
        }
        armAuthTimer()
    }

    // MARK: - Expiry

    /// Re-judges every connection when a token expired since the last look.
    func expiryTick() {
        let now = wallNow
        defer { expiryCheckedAt = now }
        if peopleTables.tokens.contains(where: { t in
            t.expires.map { $0 > expiryCheckedAt && $0 <= now } ?? false
        }) {
            rejudgeAll(why: "a token expired")
        }
        if let limiter = webLimiter { webLimiter = swept(limiter) }
        if let limiter = unixLimiter { unixLimiter = swept(limiter) }
    }

    private func swept(_ limiter: RateLimiter) -> RateLimiter {
        var l = limiter
        l.sweep(now: loop.now)
        return l
    }

    // MARK: - Rate limits

    /// Takes one change from `c`'s person's bucket: nil when it may go, else the refusal.
    func rateLimited(_ c: Connection, op: String) -> WireError? {
        let person = c.session.identity.user ?? "@" + c.address
        let wait: UInt64?
        if c.web != nil {
            guard webLimiter != nil else { return nil }
            wait = webLimiter!.take(person, now: loop.now)
        } else {
            guard unixLimiter != nil else { return nil }
            wait = unixLimiter!.take(person, now: loop.now)
        }
        guard let wait else { return nil }
        deny(c, op: op, .rateLimited)
        let ms = (wait + 999) / 1000
        return WireError(
            .overloaded, "\(person) is changing faster than this daemon's rate limit; retry in \(ms) ms",
            retryAfter: ms)
    }

    // MARK: - Denials

    /// Records a refusal of `c`'s: the journal (folded by reason), the metrics, `denials`.
    func deny(_ c: Connection, op: String, _ reason: DenialReason) {
        let who = c.session.identity
        recordDenial(
            Denial(
                at: wallNow, user: who.user, client: c.client, transport: c.web == nil ? "unix" : "web",
                address: c.address, op: op, reason: reason), role: who.role)
    }

    func recordDenial(_ denial: Denial, role: AccessRole) {
        denials.append(denial)
        journal.logFolded(
            .warning, "request refused", fold: denial.reason.rawValue,
            [
                ("CLIENT", "\(denial.client)"), ("USER", denial.user ?? "-"), ("ROLE", role.rawValue),
                ("OP", denial.op.isEmpty ? "-" : denial.op), ("REASON", denial.reason.rawValue),
                ("ADDRESS", denial.address),
            ])
    }
}

// MARK: - The web listener's doors

/// Who a WebSocket is when its handshake passes: where it comes from, its base identity, the
/// identity it starts with (the sign-in cookie's person, if its token works), and what was
/// refused on the way (a proxy header from an untrusted address, a cookie with a bad token).
struct WebDoor {
    var address: String
    var base: BaseIdentity
    var identity: Identity
    var denials: [DenialReason] = []
    /// The sign-in cookie was refused (its token gone or expired): the 101 clears it, `Secure`
    /// when the value is true.
    var clearCookie: Bool?
}

extension Server {
    /// Where a web request comes from: the browser's address (as a trusted proxy forwarded it),
    /// and whether it came through a trusted proxy.
    func webAddress(_ request: HTTPRequest, remote: String) -> (address: String, viaProxy: Bool) {
        let host = TrustedProxies.host(of: remote)
        let viaProxy = trustedProxies.contains(host)
        return (
            viaProxy ? TrustedProxies.forwarded(request.values("x-forwarded-for")) ?? host : host, viaProxy
        )
    }

    func webDoor(_ request: HTTPRequest, remote: String) -> WebDoor {
        let (address, viaProxy) = webAddress(request, remote: remote)
        var door = WebDoor(address: address, base: .anonymous, identity: .anonymous(config.webAnonymous))
        if let header = config.webTrustHeader, let name = request.value(header.lowercased()), !name.isEmpty {
            if !viaProxy {
                door.denials.append(.untrustedHeader)
            } else if let problem = PersonName.problem(name) {
                journal.logFolded(
                    .warning, "a trusted proxy named a user that is no person's name, serving anonymous",
                    fold: "proxy-name", [("ADDRESS", address), ("REASON", problem)])
            } else {
                door.base = .proxy(name: name)
            }
        }
        door.identity = judge(door.base, peer: Peer())
        if let token = SignInCookie.value(in: request.values("cookie")) {
            switch checkToken(token, address: address) {
            case .signedIn(let who, _): door.identity = who
            case .refused(let reason):
                door.denials.append(reason)
                door.clearCookie = viaProxy && request.value("x-forwarded-proto")?.lowercased() == "https"
            case .wait: break  // anonymous: the page may try again
            }
        }
        return door
    }

    /// The sign-in cookie's token checked as `auth` checks one, under the same throttle: while
    /// the address must wait, the cookie is not looked at (the page is anonymous and may retry).
    enum TokenCheck {
        case signedIn(Identity, expires: UInt64?)
        case refused(DenialReason)
        /// The address must wait this long (µs) before its next sign-in.
        case wait(UInt64)
    }

    /// A token from the page (its sign-in cookie, `POST /login`) checked as `auth` checks one,
    /// under the same throttle: while the address must wait, the token is not looked at.
    func checkToken(_ token: String, address: String) -> TokenCheck {
        let delay = authThrottle.delay(for: address, now: loop.now)
        guard delay == 0 else { return .wait(delay) }
        let now = wallNow
        guard let record = peopleTables.token(hash: Tokens.hash(token)) else {
            authThrottle.failed(address, now: loop.now)
            return .refused(.badToken)
        }
        guard !record.expired(at: now) else { return .refused(.expiredToken) }
        let role = peopleTables.role(of: record.name, door: .token(id: record.id), doorRole: record.role)
        guard role > .none else { return .refused(.noRights) }
        authThrottle.succeeded(address)
        return .signedIn(
            Identity(user: record.name, role: role, door: .token(id: record.id)), expires: record.expires)
    }
}

/// The web page's sign-in cookie (`POST /login` sets it, `POST /logout` clears it; protocol.md,
/// "Signing in from the page"): the token itself, `HttpOnly` and `SameSite=Strict`, so that
/// page scripts and other sites cannot read or send it; the WebSocket's handshake carries it.
enum SignInCookie {
    static let name = "swiped_token"

    /// The cookie's value in the request's `Cookie` lines (RFC 6265, 5.4), nil if none.
    static func value(in lines: [String]) -> String? {
        for line in lines {
            for pair in line.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                guard let eq = trimmed.firstIndex(of: "="), trimmed[..<eq] == name else { continue }
                let value = String(trimmed[trimmed.index(after: eq)...])
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }
}

// MARK: - Signing in from the page

extension Server {
    /// `POST /login` (the token as the body) and `POST /logout`: the sign-in cookie set or
    /// cleared (protocol.md, "Signing in from the page"). The answer, and why it is a refusal
    /// of the web listener's, if it is one.
    func signInPost(_ request: HTTPRequest, remote: String) -> ([UInt8], WebRefusal?, String?) {
        // WebConnection lets a POST through to /login and /logout only (its postPaths).
        let login = request.path.elementsEqual("/login".utf8)
        // A page of another site must not sign a browser in or out (login CSRF).
        if case .refused(let why) = webPolicy.check(
            origin: request.values("origin"), host: request.value("host"))
        {
            return (Response.error(.forbidden), .origin, why)
        }
        let (address, viaProxy) = webAddress(request, remote: remote)
        let secure = viaProxy && request.value("x-forwarded-proto")?.lowercased() == "https"
        guard login else {
            return (
                Response.make(
                    .ok, contentType: Response.plainText, body: "signed out\n",
                    extra: [SignInCookie.clearing(secure: secure)]), nil, nil
            )
        }
        // The token without the spaces and line ends around it (a pasted token often has one).
        let isSpace = { (b: UInt8) in b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A }
        let token = String(
            decoding: request.body.drop(while: isSpace).reversed().drop(while: isSpace).reversed(),
            as: UTF8.self)
        let answer: [UInt8]
        switch checkToken(token, address: address) {
        case .signedIn(let who, let expires):
            let maxAge = expires.map { $0 > wallNow ? ($0 - wallNow) / 1_000_000 : 0 } ?? SignInCookie.maxAge
            var body = JSONWriter()
            body.object {
                $0.field("user", who.user ?? "")
                $0.field("role", who.role.rawValue)
            }
            journal.log(.info, "signed in from the page", [("USER", who.user ?? "-"), ("ADDRESS", address)])
            answer = Response.make(
                .ok, contentType: "application/json", body: String(decoding: body.bytes, as: UTF8.self),
                extra: [SignInCookie.setting(token, maxAge: maxAge, secure: secure)])
        case .refused(let reason):
            recordDenial(
                Denial(
                    at: wallNow, user: nil, client: 0, transport: "web", address: address, op: "login",
                    reason: reason),
                role: config.webAnonymous)
            answer = Response.make(
                .forbidden, contentType: Response.plainText, body: Self.words(reason) + "\n")
        case .wait(let us):
            answer = Response.make(
                .tooManyRequests, contentType: Response.plainText,
                body: "too many failed sign-ins; wait a moment\n",
                extra: ["Retry-After: \((us + 999_999) / 1_000_000)"])
        }
        return (answer, nil, nil)
    }

    static func words(_ reason: DenialReason) -> String {
        switch reason {
        case .badToken: "no such token (never made, or revoked)"
        case .expiredToken: "this token expired; ask an admin for a new one"
        case .noRights: "this person has no rights here"
        case .forbidden, .untrustedHeader, .rateLimited: reason.rawValue
        }
    }
}

extension SignInCookie {
    /// Without an expiry, the longest a browser keeps a cookie (400 days, RFC 6265bis).
    static let maxAge: UInt64 = 400 * 86_400

    /// The cookie's attributes: no `Path`, so that its path is the login's own directory (the
    /// page's, also behind a proxy's prefix); no `Domain`, so that it goes to this host only.
    static func setting(_ token: String, maxAge: UInt64, secure: Bool) -> String {
        "Set-Cookie: \(name)=\(token); Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
            + (secure ? "; Secure" : "")
    }

    static func clearing(secure: Bool) -> String { setting("", maxAge: 0, secure: secure) }

    /// A 101 response with the clearing header line added before its end.
    static func clearing101(_ response: [UInt8], secure: Bool) -> [UInt8] {
        precondition(response.count >= 4 && response.suffix(4).elementsEqual("\r\n\r\n".utf8), "not a head")
        return Array(response.dropLast(2)) + Array((clearing(secure: secure) + "\r\n\r\n").utf8)
    }
}
