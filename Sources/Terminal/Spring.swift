#if canImport(Glibc)
    import Glibc
#endif

// SwiftUI's `.spring(response:dampingFraction:)` as a pure function of time: a unit mass on a
// spring of stiffness (2π/response)² with damping 4π·dampingFraction/response, solved in closed
// form, so that a frame drawn at any time shows where the row would be (no integration steps,
// no drift with the frame rate).

public struct Spring: Equatable, Sendable {
    public var response: Double
    public var dampingFraction: Double

    public init(response: Double, dampingFraction: Double) {
        self.response = response
        self.dampingFraction = dampingFraction
    }

    /// Position and velocity `t` seconds after leaving `from` at `velocity` toward `target`.
    public func state(from: Double, velocity: Double, target: Double, at t: Double) -> (
        position: Double, velocity: Double
    ) {
        guard response > 0, t > 0 else { return response > 0 ? (from, velocity) : (target, 0) }
        let omega = 2 * Double.pi / response
        let zeta = max(0, dampingFraction)
        let a = from - target
        if zeta < 1 {
            let wd = omega * (1 - zeta * zeta).squareRoot()
            let b = (velocity + zeta * omega * a) / wd
            let decay = exp(-zeta * omega * t)
            let c = cos(wd * t)
            let s = sin(wd * t)
            let x = decay * (a * c + b * s)
            let v = decay * ((b * wd - zeta * omega * a) * c - (a * wd + zeta * omega * b) * s)
            return (target + x, v)
        }
        if zeta == 1 {
            let b = velocity + omega * a
            let decay = exp(-omega * t)
            return (target + (a + b * t) * decay, (b - omega * (a + b * t)) * decay)
        }
        let root = (zeta * zeta - 1).squareRoot()
        let r1 = -omega * (zeta - root)
        let r2 = -omega * (zeta + root)
        let c2 = (velocity - r1 * a) / (r2 - r1)
        let c1 = a - c2
        let e1 = exp(r1 * t)
        let e2 = exp(r2 * t)
        return (target + c1 * e1 + c2 * e2, c1 * r1 * e1 + c2 * r2 * e2)
    }

    /// Whether a row this close to its target, this slowly, is at rest (within a quarter of a
    /// point and moving less than a point per second, far below one terminal column).
    public static func isSettled(position: Double, velocity: Double, target: Double) -> Bool {
        abs(position - target) < 0.25 && abs(velocity) < 1
    }
}

/// One row's motion: the spring started at `start` from `from` with `velocity`, toward `target`.
public struct Motion: Equatable, Sendable {
    public var from: Double
    public var velocity: Double
    public var target: Double
    public var spring: Spring
    public var start: Double

    public init(at position: Double) {
        from = position
        velocity = 0
        target = position
        spring = Spring(response: 0, dampingFraction: 1)
        start = 0
    }

    /// Where the row is at `now` (seconds, any clock the caller keeps) and how fast it moves.
    public func state(at now: Double) -> (position: Double, velocity: Double) {
        if from == target && velocity == 0 { return (target, 0) }
        let s = spring.state(from: from, velocity: velocity, target: target, at: now - start)
        return Spring.isSettled(position: s.position, velocity: s.velocity, target: target) ? (target, 0) : s
    }

    public func isMoving(at now: Double) -> Bool { state(at: now) != (target, 0) }

    /// Heads for `target` with `spring` from wherever the row is at `now`, keeping its velocity.
    public mutating func retarget(_ target: Double, spring: Spring, at now: Double) {
        if target == self.target && spring == self.spring { return }
        let s = state(at: now)
        from = s.position
        velocity = s.velocity
        self.target = target
        self.spring = spring
        start = now
    }
}
